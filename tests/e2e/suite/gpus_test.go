package suite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

const placementNamespace = "e2e"

// Waits of one scheduling decision, and of a burst settling.
const (
	bindTimeout   = 20 * time.Second
	settleTimeout = 45 * time.Second
	// pendingHold is how long a refused pod is watched after its first
	// FailedScheduling event: kube-scheduler retries a refused pod after
	// 1 s, then 2 s (backoff), so this spans retries.
	pendingHold = 3 * time.Second
)

// gpuschedShareRefusal is gpusched's reason for a share on a node whose
// GPUs are not time-sliced (scheduler/gpu_fit.cc, PlanShare).
const gpuschedShareRefusal = "a GPU share (gpusched.io/gpu-milli) needs a time-sliced or MPS node " +
	"(nvidia.com/gpu.replicas > 1); this node's GPUs are not shared"

// TestBurstOfWholeGpuPodsGetsDisjointDevices creates 100 whole-GPU pods at
// once, more than the demo cluster holds, and checks that every pod that
// can fit binds, that the others say why, and that no device is handed
// out twice.
//
// Capacity for a pod that tolerates nothing (l4-2 is cordoned, t4-1
// tainted): dgx-h100-0..3 4x8, a100-mig-0..2 3x4 whole GPUs, l4-0 4, t4-0 2,
// and l4-1 16 replicas (4 L4s shared 4 ways; a k-GPU pod takes k replicas
// on k different GPUs, so 8-GPU pods never fit there): 66 units, against
// 25x(1+2+4+8) = 375 asked. Nothing finishes, so once settled no pending
// pod may fit anywhere. That bounds what binds: with a 1-GPU pod pending
// every unit is taken (66); otherwise all 25 1-GPU pods are bound, and
// not all 2-GPU pods can be (25+50 > 66), so a 2-GPU pod is pending, which
// leaves at most 1 free GPU on each of the 9 other nodes and at most one
// GPU's 4 replicas on l4-1: at least 66-13 = 53 units bound.
func TestBurstOfWholeGpuPodsGetsDisjointDevices(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	setUpDemoCluster(ctx, t, cp)

	began := time.Now()
	createBurst(ctx, t, cp.Client, []int{1, 2, 4, 8}, 25, 4)
	pods, nodes := waitBurstSettled(ctx, t, cp)
	t.Logf("burst settled in %v", time.Since(began).Round(time.Millisecond))

	const minBoundUnits = 53
	if bound := boundGpuUnits(pods); bound < minBoundUnits {
		t.Errorf("%d nvidia.com/gpu units bound; any settled state binds at least %d", bound, minBoundUnits)
	}
	checkPendingReasons(ctx, t, cp.Client, pods)
	checkDevicesOnEveryNode(t, cp, nodes, pods)
	logBurst(t, pods)
}

// createBurst creates perSize pods of each size from workers goroutines at
// once; each goroutine's share mixes the sizes.
func createBurst(ctx context.Context, t *testing.T, client kubernetes.Interface, sizes []int, perSize, workers int) {
	t.Helper()
	total := len(sizes) * perSize
	errs := make(chan error, total)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < total; i += workers {
				size := sizes[i%len(sizes)]
				name := fmt.Sprintf("burst-%dgpu-%02d", size, i/len(sizes))
				if _, err := gpuPod(name, size).Create(ctx, client); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// waitBurstSettled waits until every pod is bound, or has a
// FailedScheduling event and fits on no node by what the API server shows.
func waitBurstSettled(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) ([]corev1.Pod, []corev1.Node) {
	t.Helper()
	var pods []corev1.Pod
	var nodes []corev1.Node
	var unsettled []string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, settleTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		if pods, nodes, err = listPodsAndNodes(ctx, cp.Client); err != nil {
			return false, nil // the next poll may do better
		}
		reasons, err := cluster.FailedSchedulingByPod(ctx, cp.Client, placementNamespace)
		if err != nil {
			return false, nil
		}
		unsettled = unsettledPods(pods, nodes, reasons)
		return len(unsettled) == 0, nil
	})
	if err != nil {
		t.Fatalf("burst did not settle: %v\n%d pods unsettled:\n  %s\ngpusched's view: %s",
			err, len(unsettled), strings.Join(unsettled, "\n  "), gpuschedView(cp))
	}
	return pods, nodes
}

// unsettledPods describes the pods that are neither bound nor refused for
// good: pending without a FailedScheduling event, or pending while some
// node has room for them.
func unsettledPods(pods []corev1.Pod, nodes []corev1.Node, reasons map[string]string) []string {
	use := cluster.GpuUse(nodes, pods)
	var out []string
	for i := range pods {
		p := &pods[i]
		if cluster.Bound(p) {
			continue
		}
		if _, ok := reasons[p.Name]; !ok {
			out = append(out, p.Name+": pending, no FailedScheduling event yet")
			continue
		}
		if fits := nodesWithRoom(p, nodes, use); len(fits) > 0 {
			out = append(out, fmt.Sprintf("%s: pending although it fits on %v (last FailedScheduling: %q)",
				p.Name, fits, reasons[p.Name]))
		}
	}
	return out
}

// nodesWithRoom names the nodes that admit the pod and have room for its
// whole GPUs.
func nodesWithRoom(pod *corev1.Pod, nodes []corev1.Node, use map[string]*cluster.NodeGpuUse) []string {
	want := int(cluster.Requested(pod, cluster.GpuResource))
	var names []string
	for i := range nodes {
		n := &nodes[i]
		if cluster.Admits(n, pod) && use[n.Name].WholeGpusFit(want) {
			names = append(names, n.Name)
		}
	}
	return names
}

func boundGpuUnits(pods []corev1.Pod) int64 {
	var units int64
	for i := range pods {
		if cluster.Bound(&pods[i]) {
			units += cluster.Requested(&pods[i], cluster.GpuResource)
		}
	}
	return units
}

// checkPendingReasons: a pod left pending was told why, in terms of GPUs.
func checkPendingReasons(ctx context.Context, t *testing.T, client kubernetes.Interface, pods []corev1.Pod) {
	t.Helper()
	reasons, err := cluster.FailedSchedulingByPod(ctx, client, placementNamespace)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods {
		p := &pods[i]
		if !cluster.Bound(p) && !strings.Contains(reasons[p.Name], cluster.GpuResource) {
			t.Errorf("%s pending; its FailedScheduling event %q does not mention %s", p.Name, reasons[p.Name], cluster.GpuResource)
		}
	}
}

// checkDevicesOnEveryNode applies NodeGpuUse.CheckDevices to every node.
func checkDevicesOnEveryNode(t *testing.T, cp *controlplane.ControlPlane, nodes []corev1.Node, pods []corev1.Pod) {
	t.Helper()
	use := cluster.GpuUse(nodes, pods)
	var problems, broken []string
	for _, n := range nodes {
		if found := use[n.Name].CheckDevices(); len(found) > 0 {
			problems = append(problems, found...)
			broken = append(broken, n.Name)
		}
	}
	for i := range pods {
		if p := &pods[i]; cluster.Bound(p) && use[p.Spec.NodeName] == nil {
			problems = append(problems, fmt.Sprintf("%s bound to %s, which is not a node", p.Name, p.Spec.NodeName))
		}
	}
	if len(problems) > 0 {
		t.Errorf("device assignments broken:\n  %s\ngpusched's view: %s", strings.Join(problems, "\n  "), gpuschedView(cp, broken...))
	}
}

func logBurst(t *testing.T, pods []corev1.Pod) {
	t.Helper()
	boundBySize := map[int64]int{}
	perNode := map[string][]string{}
	for i := range pods {
		p := &pods[i]
		if !cluster.Bound(p) {
			continue
		}
		boundBySize[cluster.Requested(p, cluster.GpuResource)]++
		perNode[p.Spec.NodeName] = append(perNode[p.Spec.NodeName], p.Annotations[cluster.GpuIDsAnnotation])
	}
	t.Logf("bound per size (GPUs: pods): %v; %d GPU units", boundBySize, boundGpuUnits(pods))
	for _, node := range slices.Sorted(maps.Keys(perNode)) {
		t.Logf("  %s: gpu-ids %v", node, perNode[node])
	}
}

// TestFourGpuPodGetsOneWholeNvlinkIsland puts a 4-GPU pod on a node with
// two NVLink islands of four, one GPU of which is taken: it must get the
// whole free island.
//
// The islands are the even and the odd GPUs, and GPU 0 is held. A
// lowest-index allocator would give 1,2,3,4, straddling both islands;
// gpusched's default topology (what it uses if it ignored the
// annotation: NVSwitch all-to-all, NUMA halves 0-3 and 4-7) would give
// 4,5,6,7. Only a choice by the annotation's links gives 1,3,5,7: six
// NV12 pairs against at most three for any other set.
func TestFourGpuPodGetsOneWholeNvlinkIsland(t *testing.T) {
	// gpusched starts after the held pod exists, so its first list has
	// it: no race between its pod watch and the 4-GPU pod's filter.
	cp := controlplane.Start(t, controlplane.Options{NoGpusched: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nodes := setUpDemoCluster(ctx, t, cp)
	const nodeName = "nvlink-islands-0"
	islands := [][]int{{0, 2, 4, 6}, {1, 3, 5, 7}}
	node := cluster.CopyNode(cluster.NodeNamed(nodes, "dgx-h100-3"), nodeName)
	node.Annotations[cluster.GpuTopologyAnnotation] = islandTopology(t, 8, islands, []int{0, 0, 0, 0, 1, 1, 1, 1})
	if _, err := cluster.CreateNode(ctx, cp.Client, node); err != nil {
		t.Fatal(err)
	}
	// Another scheduler's pod holds GPU 0 (of the even island).
	_, err := heldPod("held-gpu-0", nodeName, 1, "0").Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
	cp.StartGpusched()

	pod := bindPinned(ctx, t, cp, gpuPod("four-gpus", 4).NodeSelector(cluster.HostnameLabel, nodeName))
	ids, err := cluster.GpuIDs(pod)
	if err != nil {
		t.Fatal(err)
	}
	if want := islands[1]; !slices.Equal(ids, want) {
		t.Errorf("4-GPU pod got GPUs %v; want the whole free NVLink island %v (topology %s)\ngpusched's view: %s",
			ids, want, node.Annotations[cluster.GpuTopologyAnnotation], gpuschedView(cp, nodeName))
	}
}

// islandTopology is the compact JSON topology of n GPUs (README "How
// gpusched sees GPUs"): NV12 inside each island; between islands NODE on
// the same NUMA node and SYS across NUMA nodes, as nvidia-smi names them.
func islandTopology(t *testing.T, n int, islands [][]int, numa []int) string {
	t.Helper()
	island := make([]int, n)
	for i, members := range islands {
		for _, gpu := range members {
			island[gpu] = i
		}
	}
	links := make([][]string, n)
	for a := range n {
		links[a] = make([]string, n)
		for b := range n {
			switch {
			case a == b:
				links[a][b] = "X"
			case island[a] == island[b]:
				links[a][b] = "NV12"
			case numa[a] == numa[b]:
				links[a][b] = "NODE"
			default:
				links[a][b] = "SYS"
			}
		}
	}
	text, err := json.Marshal(map[string]any{"links": links, "numa": numa})
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// TestMigAndTimeSlicedSharesLandOnTheRightNodes: MIG instances come only
// from nodes offering the profile (a node being repartitioned offers
// none), GPU shares only from the time-sliced node, several shares to one
// GPU, and neither the cordoned nor the tainted node takes a pod that does
// not tolerate it.
func TestMigAndTimeSlicedSharesLandOnTheRightNodes(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	nodes := setUpDemoCluster(ctx, t, cp, func(n *corev1.Node) {
		if n.Name == "a100-mig-2" {
			n.Labels[migStateLabel] = "pending"
		}
	})

	checkMigPods(ctx, t, cp, nodes)
	checkSharePods(ctx, t, cp, nodes)
	checkCordonAndTaint(ctx, t, cp)
}

// checkMigPods: MIG pods bind only to nodes that offer their profile now.
// a100-mig-2 is being repartitioned (setUpDemoCluster edits its
// nvidia.com/mig.config.state), so only gpusched knows it offers nothing:
// kube-scheduler sees its allocatable instances. Ten 3g.20gb instances are
// asked for, 8 are offered (a100-mig-0 and -1): one pod of five stays
// pending, refused by gpusched on a100-mig-2.
func checkMigPods(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, nodes []corev1.Node) {
	t.Helper()
	type ask struct {
		prefix, resource string
		pods, bound      int
	}
	asks := []ask{
		{"mig-1g-", "nvidia.com/mig-1g.5gb", 3, 3},
		{"mig-2g-", "nvidia.com/mig-2g.10gb", 2, 2},
		{"mig-3g-", "nvidia.com/mig-3g.20gb", 5, 4},
	}
	for _, a := range asks {
		for i := range a.pods {
			pod := cluster.NewPod(placementNamespace, fmt.Sprintf("%s%d", a.prefix, i)).
				SchedulerName(cluster.SchedulerName).Resource(a.resource, "2")
			if _, err := pod.Create(ctx, cp.Client); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, a := range asks {
		waitProductSettled(ctx, t, cp, a.prefix, a.bound, a.pods-a.bound)
	}
	pods, _ := mustListPodsAndNodes(ctx, t, cp.Client)
	used := map[string]int64{} // "node resource" -> instances bound
	for i := range pods {
		p := &pods[i]
		idx := slices.IndexFunc(asks, func(a ask) bool { return strings.HasPrefix(p.Name, a.prefix) })
		if idx < 0 || !cluster.Bound(p) {
			continue
		}
		resource := asks[idx].resource
		node := cluster.NodeNamed(nodes, p.Spec.NodeName)
		if node == nil || cluster.Allocatable(node, resource) == 0 || node.Labels[migStateLabel] != "success" {
			t.Errorf("%s (2 %s) bound to %s, which offers no %s now", p.Name, resource, p.Spec.NodeName, resource)
			continue
		}
		key := node.Name + " " + resource
		if used[key] += 2; used[key] > cluster.Allocatable(node, resource) {
			t.Errorf("%d %s bound on %s, which has %d", used[key], resource, node.Name, cluster.Allocatable(node, resource))
		}
	}
	t.Logf("MIG instances bound: %v", used)
	reasons, err := cluster.FailedSchedulingByPod(ctx, cp.Client, placementNamespace)
	if err != nil {
		t.Fatal(err)
	}
	const want = "MIG reconfiguration in progress (nvidia.com/mig.config.state=pending)"
	for i := range pods {
		if p := &pods[i]; strings.HasPrefix(p.Name, "mig-3g-") && !cluster.Bound(p) && !strings.Contains(reasons[p.Name], want) {
			t.Errorf("%s pending; FailedScheduling %q lacks gpusched's %q", p.Name, reasons[p.Name], want)
		}
	}
}

// checkSharePods: five 250-milli shares all go to the time-sliced node,
// best fit: four fill one GPU, the fifth starts another.
func checkSharePods(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, nodes []corev1.Node) {
	t.Helper()
	const shares = 5
	for i := range shares {
		if _, err := sharePod(fmt.Sprintf("share-%d", i), 250).Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
	}
	perGpu := map[string]int{} // node/GPU id -> shares
	for i := range shares {
		pod, err := cluster.WaitBound(ctx, cp.Client, placementNamespace, fmt.Sprintf("share-%d", i), bindTimeout)
		if err != nil {
			t.Fatal(err)
		}
		node := cluster.NodeNamed(nodes, pod.Spec.NodeName)
		if node == nil || cluster.GpuReplicas(node) < 2 {
			t.Errorf("share %s bound to %s, which does not share its GPUs", pod.Name, pod.Spec.NodeName)
			continue
		}
		ids, err := cluster.GpuIDs(pod)
		if err != nil || len(ids) != 1 {
			t.Errorf("share %s: gpu-ids %v (%v); want one GPU", pod.Name, ids, err)
			continue
		}
		perGpu[fmt.Sprintf("%s/%d", node.Name, ids[0])]++
	}
	counts := slices.Sorted(maps.Values(perGpu))
	// Best fit (README "Device allocation") puts each share on the GPU
	// with the least room that still fits it.
	if !slices.Equal(counts, []int{1, 4}) {
		t.Errorf("shares per GPU %v; want best fit: 4 on one GPU and 1 on another", perGpu)
	}
	t.Logf("250-milli shares per GPU: %v", perGpu)
	pods, nodesNow := mustListPodsAndNodes(ctx, t, cp.Client)
	checkDevicesOnEveryNode(t, cp, nodesNow, pods)
}

// checkCordonAndTaint: more L4 and T4 pods than the schedulable L4 and T4
// nodes hold. The spares stay pending, never on cordoned l4-2 or tainted
// t4-1; a pod tolerating the taint then goes to t4-1, so the spares were
// kept off by the taint, not by a lack of GPUs.
func checkCordonAndTaint(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	groups := []struct {
		product string
		pods    int
		fit     int // GPUs of that product on schedulable, untainted nodes
	}{{"NVIDIA-L4", 6, 4}, {"Tesla-T4", 4, 2}}
	for _, g := range groups {
		for i := range g.pods {
			pod := gpuPod(fmt.Sprintf("%s-%d", strings.ToLower(g.product), i), 1).NodeSelector(productLabel, g.product)
			if _, err := pod.Create(ctx, cp.Client); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, g := range groups {
		waitProductSettled(ctx, t, cp, strings.ToLower(g.product)+"-", g.fit, g.pods-g.fit)
	}
	tolerating := gpuPod("tesla-t4-tolerating", 1).NodeSelector(productLabel, "Tesla-T4").
		Toleration(corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "inference", Effect: corev1.TaintEffectNoSchedule})
	if pod := bindPinned(ctx, t, cp, tolerating); pod.Spec.NodeName != "t4-1" {
		t.Errorf("tolerating T4 pod bound to %s; want t4-1 (t4-0 is full)", pod.Spec.NodeName)
	}
	pods, _ := mustListPodsAndNodes(ctx, t, cp.Client)
	for i := range pods {
		p := &pods[i]
		if (p.Spec.NodeName == "l4-2") || (p.Spec.NodeName == "t4-1" && p.Name != "tesla-t4-tolerating") {
			t.Errorf("%s bound to %s, which is cordoned or tainted against it", p.Name, p.Spec.NodeName)
		}
	}
}

// GPU Feature Discovery and mig-manager labels the tests select on or edit.
const (
	productLabel  = "nvidia.com/gpu.product"
	migStateLabel = "nvidia.com/mig.config.state"
)

// waitProductSettled waits until, of the pods named prefix*, bound are
// bound and pending have a FailedScheduling event, and checks that the
// pending ones stay so.
func waitProductSettled(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, prefix string, bound, pending int) {
	t.Helper()
	var state string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, settleTimeout, true, func(ctx context.Context) (bool, error) {
		pods, _, err := listPodsAndNodes(ctx, cp.Client)
		if err != nil {
			return false, nil
		}
		reasons, err := cluster.FailedSchedulingByPod(ctx, cp.Client, placementNamespace)
		if err != nil {
			return false, nil
		}
		var b, p int
		var lines []string
		for i := range pods {
			pod := &pods[i]
			if !strings.HasPrefix(pod.Name, prefix) {
				continue
			}
			lines = append(lines, fmt.Sprintf("%s node=%q reason=%q", pod.Name, pod.Spec.NodeName, reasons[pod.Name]))
			if cluster.Bound(pod) {
				b++
			} else if reasons[pod.Name] != "" {
				p++
			}
		}
		state = strings.Join(lines, "\n  ")
		return b == bound && p == pending, nil
	})
	if err != nil {
		t.Fatalf("%s*: want %d bound and %d refused: %v\n  %s", prefix, bound, pending, err, state)
	}
	t.Logf("%s*:\n  %s", prefix, state)
}

// TestPodOnlyGpuschedRefusesStaysPendingWithItsReason pins a GPU share to
// l4-0, whose GPUs are not time-sliced. kube-scheduler's own checks pass
// (l4-0 has free nvidia.com/gpu, as a twin pod without the share proves by
// binding there), so the refusal is gpusched's, and its reason must reach
// the pod's FailedScheduling event.
func TestPodOnlyGpuschedRefusesStaysPendingWithItsReason(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	setUpDemoCluster(ctx, t, cp)

	share := sharePod("share-on-l4-0", 250).NodeSelector(cluster.HostnameLabel, "l4-0")
	if _, err := share.Create(ctx, cp.Client); err != nil {
		t.Fatal(err)
	}
	twin := bindPinned(ctx, t, cp, gpuPod("whole-on-l4-0", 1).NodeSelector(cluster.HostnameLabel, "l4-0"))
	if twin.Spec.NodeName != "l4-0" {
		t.Fatalf("twin bound to %s", twin.Spec.NodeName)
	}
	last := refusedPinned(ctx, t, cp, "share-on-l4-0")
	if !strings.Contains(last, gpuschedShareRefusal) {
		t.Errorf("FailedScheduling of share-on-l4-0: %q; want gpusched's reason %q", last, gpuschedShareRefusal)
	}
	t.Logf("FailedScheduling: %q", last)
}

// TestGpusHeldByAnotherSchedulersPodsCountAsUsed: pods another scheduler
// bound (spec.nodeName set at creation), some with gpusched.io/gpu-ids and
// some without, hold GPUs that gpusched must not give out again.
//
// dgx-h100-1 (8 GPUs): an unannotated 2-GPU pod, then a 4-GPU pod recorded
// on GPUs 0-3, so 2 GPUs are left: a 3-GPU pod pinned there stays pending,
// a 2-GPU pod binds to GPUs outside 0-3. gpusched learns the unannotated
// pod first and must not let its guess of that pod's GPUs displace the
// recorded GPUs 0-3.
//
// l4-1 (4 L4s shared 4 ways, 16 replicas): four 3-replica pods recorded on
// GPUs 0,1,2 fill those GPUs; kube-scheduler sees 4 replicas free, but
// only GPU 3 has any, so a 2-replica pod (two different GPUs) is refused
// by gpusched, naming how many GPUs have a replica free, and a 1-replica
// pod gets GPU 3.
func TestGpusHeldByAnotherSchedulersPodsCountAsUsed(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	setUpDemoCluster(ctx, t, cp)
	held := []*cluster.PodBuilder{
		heldPod("held-a-unannotated", "dgx-h100-1", 2, ""),
		heldPod("held-b-gpus-0-3", "dgx-h100-1", 4, "0,1,2,3"),
	}
	for i := range 4 {
		held = append(held, heldPod(fmt.Sprintf("held-c-replicas-%d", i), "l4-1", 3, "0,1,2"))
	}
	// Created one by one while gpusched runs: its pod watch delivers them
	// in this order (its first list would give them in UID order). They
	// are Running, which the fake kubelet writes after its own watch saw
	// them, before any gpusched pod exists.
	for _, b := range held {
		if _, err := b.Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
	}
	allRunning := func(pods []corev1.Pod) bool {
		return len(pods) == len(held) && !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return !cluster.Running(&p) })
	}
	if _, err := cluster.WaitForPods(ctx, cp.Client, placementNamespace, allRunning, bindTimeout); err != nil {
		t.Fatal(err)
	}

	checkHeldWholeGpus(ctx, t, cp)
	checkHeldReplicas(ctx, t, cp)
}

func checkHeldWholeGpus(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	tooMany := gpuPod("h100-three", 3).NodeSelector(cluster.HostnameLabel, "dgx-h100-1")
	if _, err := tooMany.Create(ctx, cp.Client); err != nil {
		t.Fatal(err)
	}
	fits := bindPinned(ctx, t, cp, gpuPod("h100-two", 2).NodeSelector(cluster.HostnameLabel, "dgx-h100-1"))
	if ids, _ := cluster.GpuIDs(fits); slices.ContainsFunc(ids, func(id int) bool { return id <= 3 }) {
		t.Errorf("h100-two got GPUs %v on %s; GPUs 0-3 are held by held-b-gpus-0-3\ngpusched's view: %s",
			ids, fits.Spec.NodeName, gpuschedView(cp, "dgx-h100-1"))
	}
	// kube-scheduler counts the held pods' requests itself, so the refusal
	// may be its own ("Insufficient nvidia.com/gpu") or gpusched's.
	reason := refusedPinned(ctx, t, cp, "h100-three")
	if !strings.Contains(reason, "Insufficient nvidia.com/gpu") && !strings.Contains(reason, "needs 3 nvidia.com/gpu; 0 free") {
		t.Errorf("h100-three: FailedScheduling %q names no lack of nvidia.com/gpu", reason)
	}
}

func checkHeldReplicas(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	two := gpuPod("l4-two-replicas", 2).NodeSelector(cluster.HostnameLabel, "l4-1")
	if _, err := two.Create(ctx, cp.Client); err != nil {
		t.Fatal(err)
	}
	one := bindPinned(ctx, t, cp, gpuPod("l4-one-replica", 1).NodeSelector(cluster.HostnameLabel, "l4-1"))
	if ids, _ := cluster.GpuIDs(one); !slices.Equal(ids, []int{3}) {
		t.Errorf("l4-one-replica got GPUs %v; GPUs 0-2 are full, want [3]\ngpusched's view: %s", ids, gpuschedView(cp, "l4-1"))
	}
	const want = "needs 2 nvidia.com/gpu replicas (250 milli-GPU each, on different GPUs); 1 GPUs have a replica free"
	if reason := refusedPinned(ctx, t, cp, "l4-two-replicas"); !strings.Contains(reason, want) {
		t.Errorf("l4-two-replicas: FailedScheduling %q; want gpusched's %q", reason, want)
	}
	pods, nodes := mustListPodsAndNodes(ctx, t, cp.Client)
	checkDevicesOnEveryNode(t, cp, nodes, pods)
}

// refusedPinned waits for the pod's first FailedScheduling event, checks
// that it stays pending, and returns its latest FailedScheduling message.
func refusedPinned(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string) string {
	t.Helper()
	if _, err := cluster.WaitFailedScheduling(ctx, cp.Client, placementNamespace, name, bindTimeout); err != nil {
		t.Fatal(err)
	}
	if err := cluster.StaysPending(ctx, cp.Client, placementNamespace, name, pendingHold); err != nil {
		t.Fatalf("%v\ngpusched's view: %s", err, gpuschedView(cp))
	}
	messages, err := cluster.FailedSchedulingMessages(ctx, cp.Client, placementNamespace, name)
	if err != nil {
		t.Fatal(err)
	}
	return messages[len(messages)-1]
}

// ---- helpers shared with nodes_test.go ----

// setUpDemoCluster registers the demo nodes, changed by edits first, and
// the test namespace, and returns the nodes as the API server has them.
func setUpDemoCluster(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, edits ...func(*corev1.Node)) []corev1.Node {
	t.Helper()
	nodes, err := cluster.DemoNodes(cp.Repo)
	if err != nil {
		t.Fatal(err)
	}
	for i := range nodes {
		for _, edit := range edits {
			edit(&nodes[i])
		}
	}
	if err := cluster.CreateNodes(ctx, cp.Client, nodes); err != nil {
		t.Fatal(err)
	}
	if err := controlplane.EnsureNamespace(ctx, cp.Client, placementNamespace); err != nil {
		t.Fatal(err)
	}
	_, created := mustListPodsAndNodes(ctx, t, cp.Client)
	return created
}

// gpuPod is a gpusched pod asking for whole GPUs.
func gpuPod(name string, gpus int) *cluster.PodBuilder {
	return cluster.NewPod(placementNamespace, name).SchedulerName(cluster.SchedulerName).Gpus(gpus)
}

// sharePod is a gpusched pod asking for milli thousandths of one GPU.
func sharePod(name string, milli int) *cluster.PodBuilder {
	return gpuPod(name, 1).Annotation(cluster.GpuMilliAnnotation, fmt.Sprint(milli))
}

// heldPod is a pod another scheduler bound to node, holding gpus GPUs,
// recorded in gpusched.io/gpu-ids when ids is not empty.
func heldPod(name, node string, gpus int, ids string) *cluster.PodBuilder {
	b := cluster.NewPod(placementNamespace, name).SchedulerName(cluster.DefaultScheduler).NodeName(node).Gpus(gpus)
	if ids != "" {
		b.Annotation(cluster.GpuIDsAnnotation, ids)
	}
	return b
}

// bindPinned creates the pod and waits until it is bound.
func bindPinned(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, b *cluster.PodBuilder) *corev1.Pod {
	t.Helper()
	created, err := b.Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cluster.WaitBound(ctx, cp.Client, created.Namespace, created.Name, bindTimeout)
	if err != nil {
		t.Fatalf("%v\ngpusched's view: %s", err, gpuschedView(cp, pinnedTo(created)...))
	}
	return pod
}

// pinnedTo is the node a pod's nodeSelector pins it to, if any.
func pinnedTo(pod *corev1.Pod) []string {
	if node, ok := pod.Spec.NodeSelector[cluster.HostnameLabel]; ok {
		return []string{node}
	}
	return nil
}

func listPodsAndNodes(ctx context.Context, client kubernetes.Interface) ([]corev1.Pod, []corev1.Node, error) {
	pods, err := client.CoreV1().Pods(placementNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	return pods.Items, nodes.Items, nil
}

func mustListPodsAndNodes(ctx context.Context, t *testing.T, client kubernetes.Interface) ([]corev1.Pod, []corev1.Node) {
	t.Helper()
	pods, nodes, err := listPodsAndNodes(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	return pods, nodes
}

// gpuschedView summarises gpusched's GET /v1/nodes for the named nodes
// (all when none are named): a diagnostic for failure messages only, never
// a verdict.
func gpuschedView(cp *controlplane.ControlPlane, names ...string) string {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(cp.GpuschedURL + "/v1/nodes")
	if err != nil {
		return fmt.Sprintf("(GET /v1/nodes: %v)", err)
	}
	defer resp.Body.Close()
	var view struct {
		Nodes []struct {
			Name     string
			Topology struct{ Source string }
			Gpus     []struct {
				Index   int
				Healthy bool
			}
			Pods []struct {
				Name        string
				GpuIds      []int
				MilliPerGpu int
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&view); err != nil {
		return fmt.Sprintf("(GET /v1/nodes: %v)", err)
	}
	var b strings.Builder
	for _, n := range view.Nodes {
		if len(names) > 0 && !slices.Contains(names, n.Name) {
			continue
		}
		var unhealthy []int
		for _, g := range n.Gpus {
			if !g.Healthy {
				unhealthy = append(unhealthy, g.Index)
			}
		}
		fmt.Fprintf(&b, "\n  %s (topology: %s; unhealthy GPUs %v):", n.Name, n.Topology.Source, unhealthy)
		for _, p := range n.Pods {
			fmt.Fprintf(&b, " %s=%v@%d", p.Name, p.GpuIds, p.MilliPerGpu)
		}
	}
	return b.String()
}
