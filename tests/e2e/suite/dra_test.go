package suite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
	"gpusched.io/e2e/suite/promtext"
)

// GPUs through Dynamic Resource Allocation (issue I §4): nodes whose GPUs
// are ResourceSlices of NVIDIA's driver (gpu.nvidia.com), not
// nvidia.com/gpu in allocatable. kube-scheduler allocates the claims
// (its DynamicResources plugin), kube-controller-manager's resourceclaim
// controller makes claims from templates and deletes them once their pod
// is done; gpusched counts the devices as the node's GPUs, charges the
// queue once per pod, and writes the devices it planned
// (gpusched.io/planned-gpus) at bind. No DRA driver runs: the tests
// publish the slices, and the fake kubelet prepares nothing.

// draNodes are the DRA-only DGX H100s of these tests.
var draNodes = []string{"dra-h100-0", "dra-h100-1"}

// draPodClaim is the name of the pod resource claim of the tests' pods.
const draPodClaim = "gpus"

// TestDraGangWithClaimTemplatesWaitsForQuotaAndIsBoundWhole: two DRA-only
// DGX H100s, a queue of 8 GPUs. Gang a (4 pods, each with a claim from
// template two-gpus) is bound whole, kube-scheduler allocates every
// claim, and the queue uses 8 GPUs (the claims counted once each). Gang b,
// identical, waits for quota, none of it bound, until gang a's pods
// succeed; the resourceclaim controller deletes gang a's claims and gang
// b is bound whole. Logs how often gpusched's planned devices are the ones
// kube-scheduler allocated.
func TestDraGangWithClaimTemplatesWaitsForQuotaAndIsBoundWhole(t *testing.T) {
	policy := queuePolicy(t, map[string]int{"team-a": 8}, nil)
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy,
		ControllerManager: &controlplane.ControllerManager{Controllers: []string{"resourceclaim-controller"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	cluster.SetUpDraCluster(ctx, t, cp, draNodes...)
	createClaimTemplates(ctx, t, cp, cluster.GpuClaimTemplate("two-gpus", 2))
	waitGpuschedOffers(ctx, t, cp, map[string]int{draNodes[0]: 8, draNodes[1]: 8}, 8)
	plans := &planMatch{}

	draGang(ctx, t, cp, "a", 4, "two-gpus")
	a := waitGangBound(ctx, t, cp, "a", 4, 30*time.Second)
	aDevices := waitClaimsAllocated(ctx, t, cp, a, 2)
	checkDevicesDisjoint(t, aDevices)
	plans.add(t, a, aDevices)
	waitQueueGpus(ctx, t, cp, "team-a", 8)

	draGang(ctx, t, cp, "b", 4, "two-gpus")
	waitForReason(ctx, t, cp, "Pod", "WaitingForQuota", memberNames("b", 4))
	holdNoneBound(ctx, t, cp, "b", 2*time.Second)

	finishGang(ctx, t, cp, "a")
	waitGangSucceeded(ctx, t, cp, "a", 30*time.Second)
	waitClaimsReleased(ctx, t, cp, aDevices, true, 30*time.Second)
	b := waitGangBound(ctx, t, cp, "b", 4, 60*time.Second)
	bDevices := waitClaimsAllocated(ctx, t, cp, b, 2)
	checkDevicesDisjoint(t, bDevices)
	plans.add(t, b, bDevices)
	waitQueueGpus(ctx, t, cp, "team-a", 8)
	plans.log(t)
	checkNoForbidden(t, cp)
}

// TestDraExtendedResourceAndDevicePluginNodesShareOneQuota: a mixed
// cluster, one DRA-only DGX H100 and one device-plugin DGX H100 under one
// queue of 12 GPUs. Pods asking nvidia.com/gpu: 4 pinned to the DRA node
// are bound there with kube-scheduler's extended-resource claim of 4
// devices, and the queue is charged 4 each (the container request and
// the claim are one demand); a third pod of 1 GPU pinned there stays
// pending (the node is full). A 4-GPU pod with no selector goes to the
// device-plugin node (gpu-ids as ever), filling the quota over both kinds
// of node: the next 1-GPU pod waits for quota although the device-plugin
// node has 4 GPUs free.
func TestDraExtendedResourceAndDevicePluginNodesShareOneQuota(t *testing.T) {
	policy := queuePolicy(t, map[string]int{"team-a": 12}, nil)
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	draNode := draNodes[0]
	cluster.SetUpDraCluster(ctx, t, cp, draNode)
	pluginNode := createDemoNode(ctx, t, cp, "dgx-h100-0")
	waitGpuschedOffers(ctx, t, cp, map[string]int{draNode: 8, pluginNode: 8}, 8)
	plans := &planMatch{}
	queued := func(name string, gpus int) *cluster.PodBuilder {
		return cluster.GpuPod(name, gpus).Label(cluster.QueueLabel, "team-a")
	}

	var onDra []corev1.Pod
	for i, used := range []int{4, 8} {
		name := fmt.Sprintf("dra-%d", i)
		pod := createAndWaitBound(ctx, t, cp, queued(name, 4).NodeSelector("kubernetes.io/hostname", draNode))
		if pod.Spec.NodeName != draNode {
			t.Fatalf("%s bound to %s despite its node selector %s", name, pod.Spec.NodeName, draNode)
		}
		onDra = append(onDra, *pod)
		waitQueueGpus(ctx, t, cp, "team-a", used)
	}
	devices := waitClaimsAllocated(ctx, t, cp, onDra, 4)
	checkDevicesDisjoint(t, devices)
	plans.add(t, onDra, devices)

	full := createPending(ctx, t, cp, queued("dra-full", 1).NodeSelector("kubernetes.io/hostname", draNode))
	holdUnbound(ctx, t, cp, full, 3*time.Second)
	t.Logf("while %s is pending: team-a uses %v GPUs", full, queueGpus(cp, "team-a"))
	deletePodAndWait(ctx, t, cp, full)

	plugin := createAndWaitBound(ctx, t, cp, queued("plugin-0", 4))
	if plugin.Spec.NodeName != pluginNode {
		t.Errorf("plugin-0 bound to %s, want %s (the DRA node is full)", plugin.Spec.NodeName, pluginNode)
	}
	if ids, err := cluster.GpuIDs(plugin); err != nil || len(ids) != 4 {
		t.Errorf("plugin-0 on device-plugin node %s: gpu ids %v (%v), want 4", plugin.Spec.NodeName, ids, err)
	}
	if planned, ok := plugin.Annotations[cluster.PlannedGpusAnnotation]; ok {
		t.Errorf("plugin-0 on device-plugin node %s has %s=%q", plugin.Spec.NodeName, cluster.PlannedGpusAnnotation, planned)
	}
	waitQueueGpus(ctx, t, cp, "team-a", 12)

	over := createPending(ctx, t, cp, queued("over-quota", 1))
	waitForReason(ctx, t, cp, "Pod", "WaitingForQuota", []string{over})
	holdUnbound(ctx, t, cp, over, 2*time.Second)
	plans.log(t)
	checkGpuschedNotForbidden(t, cp)
}

// TestDraDeviceTaintRulesHideTaintedGpusAndNoExecuteEvictsTheGang: one
// DRA-only DGX H100 whose gpu-0..gpu-3 are tainted NoSchedule by four
// DeviceTaintRules (a rule's selector names one device at most). gpusched
// offers 4 GPUs there; a pod claiming 8 stays pending, one claiming 4 is
// bound to the untainted ones. With the rules and both pods gone, a gang
// of 2 x 2 runs; a NoExecute DeviceTaintRule on a device of its first
// member makes kube-controller-manager's device-taint-eviction controller
// delete that member (the controller deletes only pods using the device),
// and gpusched evicts the rest of the gang after its stale-gang grace
// period.
func TestDraDeviceTaintRulesHideTaintedGpusAndNoExecuteEvictsTheGang(t *testing.T) {
	const grace = 3 * time.Second
	policy := timerPolicy(t, 32, map[string]string{"staleGangGracePeriod": grace.String()})
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy,
		ControllerManager: &controlplane.ControllerManager{
			Controllers: []string{"resourceclaim-controller", "device-taint-eviction-controller"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	node := draNodes[0]
	cluster.SetUpDraCluster(ctx, t, cp, node)
	createClaimTemplates(ctx, t, cp, cluster.GpuClaimTemplate("two-gpus", 2),
		cluster.GpuClaimTemplate("four-gpus", 4), cluster.GpuClaimTemplate("eight-gpus", 8))
	waitGpuschedOffers(ctx, t, cp, map[string]int{node: 8}, 8)

	tainted := []string{"gpu-0", "gpu-1", "gpu-2", "gpu-3"}
	var rules []string
	for _, device := range tainted {
		rules = append(rules, createDeviceTaintRule(ctx, t, cp, node, device, resourcev1.DeviceTaintEffectNoSchedule))
	}
	waitGpuschedOffers(ctx, t, cp, map[string]int{node: 8}, 4)

	claimPod := func(name, template string) *cluster.PodBuilder {
		return cluster.NewPod(cluster.Namespace, name).SchedulerName(cluster.SchedulerName).
			Label(cluster.QueueLabel, "team-a").ClaimFromTemplate(draPodClaim, template)
	}
	eight := createPending(ctx, t, cp, claimPod("eight", "eight-gpus"))
	holdUnbound(ctx, t, cp, eight, 4*time.Second)
	four := createAndWaitBound(ctx, t, cp, claimPod("four", "four-gpus"))
	fourDevices := waitClaimsAllocated(ctx, t, cp, []corev1.Pod{*four}, 4)
	for _, d := range fourDevices[four.Name] {
		if slices.Contains(tainted, d.device) {
			t.Errorf("four: kube-scheduler allocated tainted %s", d.device)
		}
	}
	if planned := plannedGpus(four); len(planned) != 4 || slices.ContainsFunc(planned, func(d string) bool {
		return slices.Contains(tainted, d)
	}) {
		t.Errorf("four: gpusched planned %v, want 4 of the untainted gpu-4..gpu-7", planned)
	}
	holdUnbound(ctx, t, cp, eight, time.Second)

	// Clear the node: the pods, then the NoSchedule rules.
	deletePodAndWait(ctx, t, cp, eight)
	deletePodAndWait(ctx, t, cp, four.Name)
	waitClaimsReleased(ctx, t, cp, fourDevices, false, 30*time.Second)
	for _, rule := range rules {
		if err := cp.Client.ResourceV1().DeviceTaintRules().Delete(ctx, rule, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitGpuschedOffers(ctx, t, cp, map[string]int{node: 8}, 8)

	draGang(ctx, t, cp, "g", 2, "two-gpus")
	gang := waitGangBound(ctx, t, cp, "g", 2, 30*time.Second)
	gangDevices := waitClaimsAllocated(ctx, t, cp, gang, 2)
	for i := range gang {
		if _, err := cluster.WaitRunning(ctx, cp.Client, cluster.Namespace, gang[i].Name, 20*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	victim := gang[0].Name
	taintedAt := time.Now()
	createDeviceTaintRule(ctx, t, cp, node, gangDevices[victim][0].device, resourcev1.DeviceTaintEffectNoExecute)
	waitGangGone(ctx, t, cp, "g", grace+45*time.Second)
	t.Logf("gang g gone %v after a NoExecute taint on %s's %s", time.Since(taintedAt).Round(time.Millisecond),
		victim, gangDevices[victim][0].device)
	// The controller deleted the victim only; the rest was gpusched's.
	waitForReason(ctx, t, cp, "Pod", "Evicted", survivorsOf(gang, victim))
	checkNoForbidden(t, cp)
}

// checkGpuschedNotForbidden: gpusched read the DRA objects (and did all
// else) with deploy/'s role (checkNoForbidden without
// kube-controller-manager).
func checkGpuschedNotForbidden(t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	lines, err := cluster.GrepLog(filepath.Join(cp.Dir, controlplane.Gpusched+".log"), "forbidden")
	if err != nil {
		t.Error(err)
	}
	if len(lines) > 0 {
		t.Errorf("gpusched.log has %d forbidden requests, first: %s", len(lines), lines[0])
	}
}

// createClaimTemplates creates ResourceClaimTemplates in the namespace.
func createClaimTemplates(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, templates ...*resourcev1.ResourceClaimTemplate) {
	t.Helper()
	for _, tmpl := range templates {
		if _, err := cp.Client.ResourceV1().ResourceClaimTemplates(tmpl.Namespace).Create(ctx, tmpl, metav1.CreateOptions{}); err != nil {
			t.Fatalf("ResourceClaimTemplate %s: %v", tmpl.Name, err)
		}
	}
}

// createDeviceTaintRule taints one device of the node's pool (the
// driver's) with key gpusched.io/e2e-maintenance and returns the rule's
// name.
func createDeviceTaintRule(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, node, device string,
	effect resourcev1.DeviceTaintEffect) string {
	t.Helper()
	rule := &resourcev1.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: strings.ToLower(fmt.Sprintf("%s-%s-%s", node, device, effect))},
		Spec: resourcev1.DeviceTaintRuleSpec{
			DeviceSelector: &resourcev1.DeviceTaintSelector{
				Driver: ptr.To(cluster.NvidiaDraDriver), Pool: ptr.To(node), Device: ptr.To(device)},
			Taint: resourcev1.DeviceTaint{Key: "gpusched.io/e2e-maintenance", Value: "true", Effect: effect},
		},
	}
	if _, err := cp.Client.ResourceV1().DeviceTaintRules().Create(ctx, rule, metav1.CreateOptions{}); err != nil {
		t.Fatalf("DeviceTaintRule %s: %v", rule.Name, err)
	}
	return rule.Name
}

// createDemoNode registers one node of the demo cluster (a device-plugin
// node: nvidia.com/gpu in its allocatable) and returns its name.
func createDemoNode(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string) string {
	t.Helper()
	nodes, err := cluster.DemoNodes(cp.Repo)
	if err != nil {
		t.Fatal(err)
	}
	for i := range nodes {
		if nodes[i].Name == name {
			if _, err := cluster.CreateNode(ctx, cp.Client, &nodes[i]); err != nil {
				t.Fatal(err)
			}
			return name
		}
	}
	t.Fatalf("demo cluster has no node %s", name)
	return ""
}

// draGang creates a Kueue pod group of `count` pods in LocalQueue team-a,
// each asking its GPUs only through a claim from `template`.
func draGang(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, group string, count int, template string) {
	t.Helper()
	for i := 0; i < count; i++ {
		_, err := cluster.NewPod(cluster.Namespace, fmt.Sprintf("%s-%d", group, i)).SchedulerName(cluster.SchedulerName).
			Label(cluster.QueueLabel, "team-a").
			Label("kueue.x-k8s.io/pod-group-name", group).
			Annotation("kueue.x-k8s.io/pod-group-total-count", fmt.Sprint(count)).
			ClaimFromTemplate(draPodClaim, template).
			Create(ctx, cp.Client)
		if err != nil {
			t.Fatal(err)
		}
	}
}

func memberNames(group string, count int) []string {
	var names []string
	for i := 0; i < count; i++ {
		names = append(names, fmt.Sprintf("%s-%d", group, i))
	}
	return names
}

func createPending(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, b *cluster.PodBuilder) string {
	t.Helper()
	pod, err := b.Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
	return pod.Name
}

func createAndWaitBound(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, b *cluster.PodBuilder) *corev1.Pod {
	t.Helper()
	pod, err := cluster.WaitBound(ctx, cp.Client, cluster.Namespace, createPending(ctx, t, cp, b), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// holdUnbound checks for d that the pod stays without a node.
func holdUnbound(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		pod, err := cp.Client.CoreV1().Pods(cluster.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pod.Spec.NodeName != "" {
			t.Fatalf("%s bound to %s; want it pending", name, pod.Spec.NodeName)
		}
	}
}

func deletePodAndWait(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string) {
	t.Helper()
	if err := cp.Client.CoreV1().Pods(cluster.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, err := cp.Client.CoreV1().Pods(cluster.Namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still exists 30 s after its deletion (%v)", name, err)
		}
	}
}

// waitGangSucceeded waits until every member of the group Succeeded.
func waitGangSucceeded(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, group string, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(100 * time.Millisecond) {
		pods := gangPods(ctx, t, cp, group)
		done := 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodSucceeded {
				done++
			}
		}
		if done == len(pods) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gang %s: %d of %d members succeeded after %v", group, done, len(pods), timeout)
		}
	}
}

// allocatedDevice is one device of a claim's allocation.
type allocatedDevice struct {
	claim, node, device string
}

// podClaimNames are the ResourceClaims a pod uses: those made from its
// templates (status.resourceClaimStatuses) and kube-scheduler's claim for
// its extended resources backed by DRA.
func podClaimNames(pod *corev1.Pod) []string {
	var names []string
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			names = append(names, *s.ResourceClaimName)
		}
	}
	if s := pod.Status.ExtendedResourceClaimStatus; s != nil {
		names = append(names, s.ResourceClaimName)
	}
	return names
}

// waitClaimsAllocated waits until each pod's claims are allocated with
// `per` devices in all, every one of the driver's pool on the pod's node,
// and reserved for the pod; it returns each pod's devices.
func waitClaimsAllocated(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, pods []corev1.Pod, per int) map[string][]allocatedDevice {
	t.Helper()
	out := map[string][]allocatedDevice{}
	for i := range pods {
		name := pods[i].Name
		var why string
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			var devices []allocatedDevice
			devices, why = podAllocation(ctx, cp, name)
			if why == "" && len(devices) != per {
				why = fmt.Sprintf("%d devices allocated, want %d", len(devices), per)
			}
			if why == "" {
				out[name] = devices
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: claims not allocated after 20 s: %s", name, why)
			}
		}
	}
	return out
}

// podAllocation reads the pod and its claims: their devices, or why they
// are not (yet) allocated for it on its node.
func podAllocation(ctx context.Context, cp *controlplane.ControlPlane, name string) ([]allocatedDevice, string) {
	pod, err := cp.Client.CoreV1().Pods(cluster.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err.Error()
	}
	claims := podClaimNames(pod)
	if len(claims) == 0 {
		return nil, "no claim in the pod's status"
	}
	var devices []allocatedDevice
	for _, claimName := range claims {
		claim, err := cp.Client.ResourceV1().ResourceClaims(cluster.Namespace).Get(ctx, claimName, metav1.GetOptions{})
		if err != nil {
			return nil, err.Error()
		}
		if claim.Status.Allocation == nil {
			return nil, "claim " + claimName + " not allocated"
		}
		if !slices.ContainsFunc(claim.Status.ReservedFor, func(r resourcev1.ResourceClaimConsumerReference) bool {
			return r.UID == pod.UID
		}) {
			return nil, "claim " + claimName + " not reserved for the pod"
		}
		for _, r := range claim.Status.Allocation.Devices.Results {
			if r.Driver != cluster.NvidiaDraDriver || r.Pool != pod.Spec.NodeName {
				return nil, fmt.Sprintf("claim %s: device %s/%s/%s, not of the pod's node %s",
					claimName, r.Driver, r.Pool, r.Device, pod.Spec.NodeName)
			}
			devices = append(devices, allocatedDevice{claim: claimName, node: r.Pool, device: r.Device})
		}
	}
	return devices, ""
}

// checkDevicesDisjoint: no device is allocated to two pods.
func checkDevicesDisjoint(t *testing.T, devices map[string][]allocatedDevice) {
	t.Helper()
	holder := map[string]string{}
	for pod, list := range devices {
		for _, d := range list {
			key := d.node + "/" + d.device
			if other, taken := holder[key]; taken {
				t.Errorf("%s allocated to %s and %s", key, other, pod)
			}
			holder[key] = pod
		}
	}
}

// waitClaimsReleased waits until none of the claims is allocated any
// more; with gone, until none exists (the resourceclaim controller deletes
// a claim made for a pod once the pod is done; a deleted pod's claim is
// left to the garbage collector, which these tests do not run).
func waitClaimsReleased(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, devices map[string][]allocatedDevice,
	gone bool, timeout time.Duration) {
	t.Helper()
	claims := map[string]bool{}
	for _, list := range devices {
		for _, d := range list {
			claims[d.claim] = true
		}
	}
	for deadline := time.Now().Add(timeout); ; time.Sleep(200 * time.Millisecond) {
		var left []string
		for name := range claims {
			claim, err := cp.Client.ResourceV1().ResourceClaims(cluster.Namespace).Get(ctx, name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				left = append(left, name+" ("+err.Error()+")")
			case gone:
				left = append(left, fmt.Sprintf("%s (allocated %v)", name, claim.Status.Allocation != nil))
			case claim.Status.Allocation != nil:
				left = append(left, name+" (allocated)")
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			sort.Strings(left)
			t.Fatalf("claims %v still there %v after their pods were done (want them gone: %v)", left, timeout, gone)
		}
	}
}

// plannedGpus is the pod's gpusched.io/planned-gpus, sorted (nil if absent).
func plannedGpus(pod *corev1.Pod) []string {
	text, ok := pod.Annotations[cluster.PlannedGpusAnnotation]
	if !ok {
		return nil
	}
	var names []string
	for _, field := range strings.Split(text, ",") {
		if field = strings.TrimSpace(field); field != "" {
			names = append(names, field)
		}
	}
	sort.Strings(names)
	return names
}

// planMatch counts the bound DRA pods whose planned-gpus name exactly the
// devices kube-scheduler allocated. A mismatch is allowed (kube-scheduler
// picks devices by itself); a missing annotation or a gpu-ids annotation
// on a DRA pod is not.
type planMatch struct {
	pods, matched int
	mismatches    []string
}

func (m *planMatch) add(t *testing.T, pods []corev1.Pod, devices map[string][]allocatedDevice) {
	t.Helper()
	for i := range pods {
		p := &pods[i]
		if ids, ok := p.Annotations[cluster.GpuIDsAnnotation]; ok {
			t.Errorf("%s on DRA node %s has %s=%q; want %s only", p.Name, p.Spec.NodeName, cluster.GpuIDsAnnotation, ids,
				cluster.PlannedGpusAnnotation)
		}
		planned := plannedGpus(p)
		if planned == nil {
			t.Errorf("%s bound to DRA node %s without %s", p.Name, p.Spec.NodeName, cluster.PlannedGpusAnnotation)
			continue
		}
		var allocated []string
		for _, d := range devices[p.Name] {
			allocated = append(allocated, d.device)
		}
		sort.Strings(allocated)
		m.pods++
		if slices.Equal(planned, allocated) {
			m.matched++
		} else {
			m.mismatches = append(m.mismatches, fmt.Sprintf("%s planned %v allocated %v", p.Name, planned, allocated))
		}
	}
}

func (m *planMatch) log(t *testing.T) {
	t.Helper()
	t.Logf("DRA planned vs allocated: %d of %d pods matched", m.matched, m.pods)
	if len(m.mismatches) > 0 {
		t.Logf("DRA plan mismatches: %s", strings.Join(m.mismatches, "; "))
	}
}

// gpuschedNodeGpus reads gpusched's /v1/nodes: per node, its whole GPUs
// and how many of them it offers (healthy: a device tainted NoSchedule is
// not).
func gpuschedNodeGpus(ctx context.Context, cp *controlplane.ControlPlane) (total, offered map[string]int, err error) {
	nodes, err := cluster.GpuschedNodes(ctx, cp.GpuschedURL)
	if err != nil {
		return nil, nil, err
	}
	total, offered = map[string]int{}, map[string]int{}
	for _, n := range nodes {
		total[n.Name] = len(n.Gpus)
		for _, g := range n.Gpus {
			if g.Healthy {
				offered[n.Name]++
			}
		}
	}
	return total, offered, nil
}

// waitGpuschedOffers waits until gpusched's model has each node with its
// GPUs (want: node -> whole GPUs), `offered` of them offered on every
// DRA node of want.
func waitGpuschedOffers(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, want map[string]int, offered int) {
	t.Helper()
	var total, healthy map[string]int
	var err error
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		total, healthy, err = gpuschedNodeGpus(ctx, cp)
		ok := err == nil
		for node, gpus := range want {
			wantOffered := gpus
			if slices.Contains(draNodes, node) {
				wantOffered = offered
			}
			ok = ok && total[node] == gpus && healthy[node] == wantOffered
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gpusched /v1/nodes after 20 s: GPUs %v, offered %v (%v); want GPUs %v, %d offered on the DRA nodes",
				total, healthy, err, want, offered)
		}
	}
}

// queueGpus is gpusched's nvidia.com/gpu usage of the ClusterQueue, -1
// if unreadable.
func queueGpus(cp *controlplane.ControlPlane, queue string) float64 {
	return queueUsage(cp, queue, cluster.GpuResource)
}

// queueUsage is gpusched's usage of the resource by the ClusterQueue (its
// gpusched_cluster_queue_resource_usage), -1 if unreadable.
func queueUsage(cp *controlplane.ControlPlane, queue, resource string) float64 {
	text, err := cp.GpuschedMetrics()
	if err != nil {
		return -1
	}
	return promtext.Parse(text).Sum("gpusched_cluster_queue_resource_usage",
		map[string]string{"cluster_queue": queue, "resource": resource})
}

// waitQueueGpus waits until the queue uses exactly `want` GPUs.
func waitQueueGpus(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, queue string, want int) {
	t.Helper()
	waitQueueUsage(ctx, t, cp, queue, cluster.GpuResource, want)
}

// waitQueueUsage waits until the queue uses exactly `want` of the resource.
func waitQueueUsage(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, queue, resource string, want int) {
	t.Helper()
	var got float64
	for deadline := time.Now().Add(15 * time.Second); ctx.Err() == nil; time.Sleep(200 * time.Millisecond) {
		if got = queueUsage(cp, queue, resource); got == float64(want) {
			return
		}
		if time.Now().After(deadline) {
			break
		}
	}
	t.Fatalf("queue %s uses %v %s, want %d", queue, got, resource, want)
}
