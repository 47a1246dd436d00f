package cluster

import (
	"context"
	"fmt"
	"hash/fnv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"gpusched.io/e2e/suite/controlplane"
)

// GPUs through Dynamic Resource Allocation, as NVIDIA's DRA driver
// publishes them: no nvidia.com/gpu in the Node's allocatable, one
// node-local ResourceSlice per node instead. No driver runs here: the
// tests publish the slices themselves, and no kubelet prepares a claim.

// Names of NVIDIA's DRA driver and of what gpusched writes on DRA nodes.
const (
	// NvidiaDraDriver is the driver (and attribute domain) of the slices.
	NvidiaDraDriver = "gpu.nvidia.com"
	// NvidiaGpuClass is the DeviceClass of whole GPUs (the driver's chart
	// names it after the driver).
	NvidiaGpuClass = "gpu.nvidia.com"
	// PlannedGpusAnnotation is what gpusched writes at bind on a DRA node
	// in place of gpu-ids: the device names it planned ("gpu-0,gpu-3").
	PlannedGpusAnnotation = "gpusched.io/planned-gpus"
	// DraH100Product is the productName attribute of the slices' GPUs.
	DraH100Product = "NVIDIA H100 80GB HBM3"
	// DraDriverVersion is the driverVersion attribute (a version, as the
	// driver reads it from NVML) of the slices' devices.
	DraDriverVersion = "570.172.8"
)

// DraGpuNode is a DGX H100 whose 8 GPUs are published through DRA only:
// cpu, memory and pods in its allocatable, no nvidia.com/gpu, and no GFD
// labels but the product, which the suite's ResourceFlavor (KueuePolicy's
// h100) selects nodes by.
func DraGpuNode(name string) *corev1.Node {
	return draNode(name, "dgx-h100", h100Product)
}

// draNode is a node of that instance type whose GPUs only DRA publishes,
// labelled with the GFD product (the one label flavors select by).
func draNode(name, instanceType, product string) *corev1.Node {
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("224"),
		corev1.ResourceMemory: resource.MustParse("2013Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname":           name,
			"kubernetes.io/os":                 "linux",
			"kubernetes.io/arch":               "amd64",
			"node.kubernetes.io/instance-type": instanceType,
			"nvidia.com/gpu.product":           product,
		}},
		Status: corev1.NodeStatus{
			Capacity:    resources,
			Allocatable: resources.DeepCopy(),
			Addresses:   []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}},
			NodeInfo: corev1.NodeSystemInfo{Architecture: "amd64", OperatingSystem: "linux",
				KubeletVersion: "v1.37.2", ContainerRuntimeVersion: "containerd://2.1.4"},
		},
	}
}

// DraGpuSlice is the one ResourceSlice of node's pool (named after the
// node, generation 1) holding gpus whole GPUs gpu-0..gpu-<gpus-1>, with
// the attributes and capacity NVIDIA's driver publishes: type "gpu",
// index, productName, uuid, driverVersion, the standard pcieRoot (two GPUs
// per root, as on a DGX H100's PCIe switches), memory 80Gi.
func DraGpuSlice(node string, gpus int) *resourcev1.ResourceSlice {
	devices := make([]resourcev1.Device, gpus)
	for i := range devices {
		devices[i] = resourcev1.Device{
			Name: fmt.Sprintf("gpu-%d", i),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"type":                            {StringValue: ptr.To("gpu")},
				"index":                           {IntValue: ptr.To(int64(i))},
				"productName":                     {StringValue: ptr.To(DraH100Product)},
				"uuid":                            {StringValue: ptr.To(gpuUUID(node, i))},
				"driverVersion":                   {VersionValue: ptr.To(DraDriverVersion)},
				"resource.kubernetes.io/pcieRoot": {StringValue: ptr.To(fmt.Sprintf("pci0000:%02x", 0x10*(i/2+1)))},
			},
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
				"memory": {Value: resource.MustParse("80Gi")},
			},
		}
	}
	return &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-" + NvidiaDraDriver},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   NvidiaDraDriver,
			Pool:     resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			NodeName: ptr.To(node),
			Devices:  devices,
		},
	}
}

// gpuUUID is a stable made-up GPU UUID for device i of node.
func gpuUUID(node string, i int) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", node, i)
	v := h.Sum64()
	return fmt.Sprintf("GPU-%08x-%04x-%04x-%04x-%012x", uint32(v>>32), uint16(v>>16), uint16(v), i, v&0xffffffffffff)
}

// NvidiaGpuDeviceClass is the DeviceClass of NVIDIA's whole GPUs, which
// also serves container requests of nvidia.com/gpu on nodes whose
// allocatable has none (extended resources backed by DRA).
func NvidiaGpuDeviceClass() *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: NvidiaGpuClass},
		Spec: resourcev1.DeviceClassSpec{
			Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
				Expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}},
			ExtendedResourceName: ptr.To(GpuResource),
		},
	}
}

// GpuClaimTemplate is a ResourceClaimTemplate in Namespace asking for
// exactly `count` devices of NvidiaGpuClass in one request named "gpus".
func GpuClaimTemplate(name string, count int) *resourcev1.ResourceClaimTemplate {
	return ClaimTemplate(name, NvidiaGpuClass, count)
}

// ClaimTemplate is a ResourceClaimTemplate in Namespace asking for exactly
// `count` devices of the DeviceClass in one request named "gpus".
func ClaimTemplate(name, deviceClass string, count int) *resourcev1.ResourceClaimTemplate {
	return &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{
			Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
				Name: "gpus",
				Exactly: &resourcev1.ExactDeviceRequest{
					DeviceClassName: deviceClass,
					AllocationMode:  resourcev1.DeviceAllocationModeExactCount,
					Count:           int64(count),
				},
			}}},
		}},
	}
}

// SetUpDraCluster creates Namespace, NvidiaGpuDeviceClass, and for each
// name a DraGpuNode with its DraGpuSlice of 8 GPUs (node first, as a
// driver publishes once its kubelet registered).
func SetUpDraCluster(ctx context.Context, tb testing.TB, cp *controlplane.ControlPlane, names ...string) {
	tb.Helper()
	if err := controlplane.EnsureNamespace(ctx, cp.Client, Namespace); err != nil {
		tb.Fatal(err)
	}
	if _, err := cp.Client.ResourceV1().DeviceClasses().Create(ctx, NvidiaGpuDeviceClass(), metav1.CreateOptions{}); err != nil {
		tb.Fatalf("DeviceClass %s: %v", NvidiaGpuClass, err)
	}
	for _, name := range names {
		if _, err := CreateNode(ctx, cp.Client, DraGpuNode(name)); err != nil {
			tb.Fatal(err)
		}
		if _, err := cp.Client.ResourceV1().ResourceSlices().Create(ctx, DraGpuSlice(name, 8), metav1.CreateOptions{}); err != nil {
			tb.Fatalf("ResourceSlice of %s: %v", name, err)
		}
	}
}

// UpgradeDraDriver republishes the node's DraGpuSlice as NVIDIA's driver
// does after an upgrade to `version`: every device's driverVersion is the
// new one, in the pool's next generation.
func UpgradeDraDriver(ctx context.Context, tb testing.TB, cp *controlplane.ControlPlane, node, version string) {
	tb.Helper()
	slices := cp.Client.ResourceV1().ResourceSlices()
	slice, err := slices.Get(ctx, node+"-"+NvidiaDraDriver, metav1.GetOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	slice.Spec.Pool.Generation++
	for i := range slice.Spec.Devices {
		slice.Spec.Devices[i].Attributes["driverVersion"] = resourcev1.DeviceAttribute{VersionValue: ptr.To(version)}
	}
	if _, err := slices.Update(ctx, slice, metav1.UpdateOptions{}); err != nil {
		tb.Fatalf("ResourceSlice of %s: %v", node, err)
	}
}

// MIG devices through DRA, as NVIDIA's DRA driver publishes them for a GPU
// in MIG mode (cmd/gpu-kubelet-plugin, MIG devices made beforehand): the
// GPU itself is no longer a device; each MIG device is one, of type "mig",
// named gpu-<minor>-mig-<GPU instance profile id>-<placement start>-<size>,
// with its profile, its parent's UUID and product, and as capacity its
// multiprocessors, memory and the memory slices it occupies.

const (
	// A100Product is the GFD product label of DraMigNode.
	A100Product = "NVIDIA-A100-SXM4-80GB"
	// DraA100Product is the productName attribute of its devices.
	DraA100Product = "NVIDIA A100-SXM4-80GB"
	// Mig1g10gb is the A100 80GB's smallest MIG profile: GPU instance
	// profile 19, seven placements of one memory slice each.
	Mig1g10gb = "1g.10gb"
	// Mig1g10gbResource is its resource name (the device plugin's, mixed
	// strategy), which quota counts.
	Mig1g10gbResource = "nvidia.com/mig-1g.10gb"
	// Mig1g10gbClass is the DeviceClass of its MIG devices.
	Mig1g10gbClass = "mig-1g.10gb.nvidia.com"
	// mig1g10gbProfileID is NVML's GPU instance profile id of 1g.10gb.
	mig1g10gbProfileID = 19
)

// DraMigNode is an A100 80GB node whose GPUs only DRA publishes (its
// product label selects it into a flavor, as GFD's would).
func DraMigNode(name string) *corev1.Node {
	return draNode(name, "dgx-a100", A100Product)
}

// DraMigSlice is the node's one ResourceSlice (generation 1) with two
// A100 80GB: gpu-0 in MIG mode, split into seven 1g.10gb devices
// gpu-0-mig-19-<start>-1, and gpu-1 whole.
func DraMigSlice(node string) *resourcev1.ResourceSlice {
	parent := gpuUUID(node, 0)
	var devices []resourcev1.Device
	for start := 0; start < 7; start++ {
		devices = append(devices, resourcev1.Device{
			Name: fmt.Sprintf("gpu-0-mig-%d-%d-1", mig1g10gbProfileID, start),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"type":          {StringValue: ptr.To("mig")},
				"uuid":          {StringValue: ptr.To(fmt.Sprintf("MIG-%s-%d", parent[len("GPU-"):], start))},
				"parentUUID":    {StringValue: ptr.To(parent)},
				"profile":       {StringValue: ptr.To(Mig1g10gb)},
				"productName":   {StringValue: ptr.To(DraA100Product)},
				"driverVersion": {VersionValue: ptr.To(DraDriverVersion)},
				// The parent's PCIe root, as DraGpuSlice's gpu-0.
				"resource.kubernetes.io/pcieRoot": {StringValue: ptr.To("pci0000:10")},
			},
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
				"multiprocessors": {Value: resource.MustParse("14")},
				"memory":          {Value: resource.MustParse("9728Mi")},
				resourcev1.QualifiedName(fmt.Sprintf("memorySlice%d", start)): {Value: resource.MustParse("1")},
			},
		})
	}
	whole := DraGpuSlice(node, 2).Spec.Devices[1]
	whole.Attributes["productName"] = resourcev1.DeviceAttribute{StringValue: ptr.To(DraA100Product)}
	slice := DraGpuSlice(node, 0)
	slice.Spec.Devices = append(devices, whole)
	return slice
}

// MigDeviceClass is the DeviceClass of one MIG profile's devices: its
// selector is within gpusched's CEL subset, so gpusched counts them.
func MigDeviceClass(name, profile string) *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: fmt.Sprintf("device.driver == '%s' && device.attributes['%s'].type == 'mig' && "+
				"device.attributes['%s'].profile == '%s'", NvidiaDraDriver, NvidiaDraDriver, NvidiaDraDriver, profile)}}}},
	}
}

// SetUpDraMigNode creates the DeviceClass of 1g.10gb MIG devices, a
// DraMigNode and its DraMigSlice (SetUpDraCluster makes the namespace and
// the whole-GPU class).
func SetUpDraMigNode(ctx context.Context, tb testing.TB, cp *controlplane.ControlPlane, name string) {
	tb.Helper()
	if _, err := cp.Client.ResourceV1().DeviceClasses().Create(ctx, MigDeviceClass(Mig1g10gbClass, Mig1g10gb),
		metav1.CreateOptions{}); err != nil {
		tb.Fatalf("DeviceClass %s: %v", Mig1g10gbClass, err)
	}
	if _, err := CreateNode(ctx, cp.Client, DraMigNode(name)); err != nil {
		tb.Fatal(err)
	}
	if _, err := cp.Client.ResourceV1().ResourceSlices().Create(ctx, DraMigSlice(name), metav1.CreateOptions{}); err != nil {
		tb.Fatalf("ResourceSlice of %s: %v", name, err)
	}
}
