package celdiff

import (
	"fmt"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The devices of the corpus: what NVIDIA's DRA driver (k8s-dra-driver-gpu,
// cmd/gpu-kubelet-plugin/deviceinfo.go) publishes for whole GPUs and MIG
// devices, in its current shape and in an older one with index and minor,
// beside devices of another driver, one with attributes of unexpected
// types, one with pre-release versions and one with nothing at all.
// Versions are as the driver writes them, through a semver library's
// String(): "535.161.8", never "535.161.08".

const nvidiaDriver = "gpu.nvidia.com"

type attrs = map[resourceapi.QualifiedName]resourceapi.DeviceAttribute
type caps = map[resourceapi.QualifiedName]resourceapi.DeviceCapacity

func str(s string) resourceapi.DeviceAttribute { return resourceapi.DeviceAttribute{StringValue: &s} }
func num(n int64) resourceapi.DeviceAttribute  { return resourceapi.DeviceAttribute{IntValue: &n} }
func flag(b bool) resourceapi.DeviceAttribute  { return resourceapi.DeviceAttribute{BoolValue: &b} }
func ver(v string) resourceapi.DeviceAttribute { return resourceapi.DeviceAttribute{VersionValue: &v} }
func qty(q string) resourceapi.DeviceCapacity {
	return resourceapi.DeviceCapacity{Value: resource.MustParse(q)}
}
func uuid(kind string, n int) resourceapi.DeviceAttribute {
	return str(fmt.Sprintf("%s-%08x-5b1e-4c2a-9d1f-%012x", kind, 0x1f3a0000+n, 0xa0b1c2d30000+n))
}

// gpuModel is what whole GPUs and their MIG devices of one product share.
type gpuModel struct {
	product, architecture, compute, memory string
	driverVersion, cudaVersion             string
}

var (
	h100 = gpuModel{"NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", "80Gi", "550.54.15", "12.4.0"}
	a100 = gpuModel{"NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi", "535.161.8", "12.2.0"}
	l4   = gpuModel{"NVIDIA L4", "Ada Lovelace", "8.9.0", "23034Mi", "570.86.10", "12.8.0"}
)

func (m gpuModel) shared(a attrs) attrs {
	a["productName"] = str(m.product)
	a["brand"] = str("Nvidia")
	a["architecture"] = str(m.architecture)
	a["cudaComputeCapability"] = ver(m.compute)
	a["driverVersion"] = ver(m.driverVersion)
	a["cudaDriverVersion"] = ver(m.cudaVersion)
	a["addressingMode"] = str("None")
	return a
}

// gpu is a whole GPU as the current driver publishes it.
func gpu(name string, m gpuModel, minor int, pcieRoot string) Device {
	a := m.shared(attrs{
		"type":      str("gpu"),
		"uuid":      uuid("GPU", minor),
		"pcieBusID": str(fmt.Sprintf("0000:%02x:00.0", 0x18+minor*0x10)),
	})
	a["resource.kubernetes.io/pcieRoot"] = str(pcieRoot)
	return Device{Name: name, Driver: nvidiaDriver, Attributes: a, Capacity: caps{"memory": qty(m.memory)}}
}

// legacyGpu is a whole GPU as older driver releases published it: index,
// minor and MIG state, no addressing mode or PCIe root.
func legacyGpu(name string, m gpuModel, index int, migEnabled bool) Device {
	d := gpu(name, m, index, "")
	delete(d.Attributes, "addressingMode")
	delete(d.Attributes, "resource.kubernetes.io/pcieRoot")
	d.Attributes["index"] = num(int64(index))
	d.Attributes["minor"] = num(int64(index))
	d.Attributes["migCapable"] = flag(true)
	d.Attributes["migEnabled"] = flag(migEnabled)
	return d
}

// mig is a MIG device: its parent's product, its profile, its engines and
// the memory slices it takes as capacities.
func mig(name string, m gpuModel, parent int, profile string, firstSlice, slices int, sms, memory string) Device {
	a := m.shared(attrs{
		"type":       str("mig"),
		"uuid":       uuid("MIG", parent*16+firstSlice),
		"parentUUID": uuid("GPU", parent),
		"profile":    str(profile),
		"pcieBusID":  str(fmt.Sprintf("0000:%02x:00.0", 0x18+parent*0x10)),
	})
	c := caps{
		"multiprocessors": qty(sms), "copyEngines": qty(fmt.Sprint(slices)),
		"decoders": qty(fmt.Sprint((slices + 1) / 2)), "encoders": qty("0"),
		"jpegEngines": qty("1"), "ofaEngines": qty("0"), "memory": qty(memory),
	}
	for i := firstSlice; i < firstSlice+slices; i++ {
		c[resourceapi.QualifiedName(fmt.Sprintf("memorySlice%d", i))] = qty("1")
	}
	return Device{Name: name, Driver: nvidiaDriver, Attributes: a, Capacity: c}
}

// corpusDevices is every device of the corpus, in a fixed order.
func corpusDevices() []Device {
	devices := []Device{
		gpu("h100-gpu-0", h100, 0, "pci0000:15"),
		gpu("h100-gpu-3", h100, 3, "pci0000:9a"),
		gpu("l4-gpu-1", l4, 1, "pci0000:00"),
		legacyGpu("a100-gpu-0", a100, 0, false),
		legacyGpu("a100-gpu-1", a100, 1, true),
		mig("h100-mig-1g", h100, 0, "1g.10gb", 6, 1, "16", "9856Mi"),
		mig("h100-mig-3g", h100, 3, "3g.40gb", 4, 4, "60", "40192Mi"),
		mig("a100-mig-2g", a100, 1, "2g.10gb", 0, 2, "28", "9728Mi"),
		{
			Name: "vfio-gpu-2", Driver: nvidiaDriver,
			Attributes: attrs{
				"type": str("vfio"), "uuid": uuid("GPU", 2), "deviceID": str("0x2330"),
				"vendorID": str("0x10de"), "numa": num(1), "pcieBusID": str("0000:38:00.0"),
				"productName": str(h100.product),
			},
			Capacity: caps{"addressableMemory": qty("80Gi")},
		},
		{
			// Another driver: unqualified names are in its domain, and
			// it also writes into a shared one.
			Name: "example-nic-0", Driver: "dra.example.com",
			Attributes: attrs{
				"model": str("ConnectX-7"), "ports": num(2), "rdma": flag(true),
				"firmware": ver("28.39.1002"), "offset": num(-40),
				"resource.kubernetes.io/pcieRoot": str("pci0000:15"),
				"gpu.nvidia.com/peer":             str("h100-gpu-0"),
			},
			Capacity: caps{"bandwidth": qty("400G"), "queues": qty("1500m")},
		},
		{
			// Attributes of other types than the usual selectors expect.
			Name: "odd-types-0", Driver: nvidiaDriver,
			Attributes: attrs{
				"type": flag(true), "index": str("3"), "productName": num(100),
				"cudaComputeCapability": str("9.0"), "driverVersion": str("550.54.15"),
				"migEnabled": str("false"), "memory": num(80),
			},
			Capacity: caps{"memory": qty("80G"), "index": qty("3")},
		},
		{
			// Pre-release and build metadata, as a beta driver writes them.
			Name: "beta-gpu-0", Driver: nvidiaDriver,
			Attributes: h100.shared(attrs{
				"type": str("gpu"), "uuid": uuid("GPU", 9),
			}),
			Capacity: caps{"memory": qty("96Gi")},
		},
		{Name: "empty-0", Driver: nvidiaDriver, Attributes: attrs{}, Capacity: caps{}},
	}
	beta := devices[len(devices)-2].Attributes
	beta["driverVersion"] = ver("580.0.0-beta.2+build.7")
	beta["cudaDriverVersion"] = ver("13.0.0-rc.1")
	beta["cudaComputeCapability"] = ver("10.0.0")
	return devices
}
