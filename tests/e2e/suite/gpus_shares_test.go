package suite_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// GPU Feature Discovery and mig-manager labels the tests select on or edit.
const (
	productLabel  = "nvidia.com/gpu.product"
	migStateLabel = "nvidia.com/mig.config.state"
)

// gpuschedShareRefusal is gpusched's reason for a share on a node whose
// GPUs are not time-sliced (scheduler/gpu_fit.cc, PlanShare).
const gpuschedShareRefusal = "a GPU share (gpusched.io/gpu-milli) needs a time-sliced or MPS node " +
	"(nvidia.com/gpu.replicas > 1); this node's GPUs are not shared"

// TestMigAndTimeSlicedSharesLandOnTheRightNodes: MIG instances come only
// from nodes offering the profile (a node being repartitioned offers
// none), GPU shares only from the time-sliced node, several shares to one
// GPU, and neither the cordoned nor the tainted node takes a pod that does
// not tolerate it.
func TestMigAndTimeSlicedSharesLandOnTheRightNodes(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	nodes := cluster.SetUpDemoCluster(ctx, t, cp, func(n *corev1.Node) {
		if n.Name == "a100-mig-2" {
			n.Labels[migStateLabel] = "pending"
		}
	})

	checkMigPods(ctx, t, cp, nodes)
	checkSharePods(ctx, t, cp, nodes)
	checkCordonAndTaint(ctx, t, cp)
}

// checkMigPods: MIG pods bind only to nodes that offer their profile now.
// a100-mig-2 is being repartitioned (cluster.SetUpDemoCluster edits its
// nvidia.com/mig.config.state), so only gpusched knows it offers nothing:
// kube-scheduler sees its allocatable instances. Ten 3g.20gb instances are
// asked for, 8 are offered (a100-mig-0 and -1): one pod of five stays
// pending, refused by gpusched on a100-mig-2.
func checkMigPods(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, nodes []corev1.Node) {
	t.Helper()
	asks := []migAsk{
		{"mig-1g-", "nvidia.com/mig-1g.5gb", 3, 3},
		{"mig-2g-", "nvidia.com/mig-2g.10gb", 2, 2},
		{"mig-3g-", "nvidia.com/mig-3g.20gb", 5, 4},
	}
	createMigPods(ctx, t, cp, asks)
	for _, a := range asks {
		cluster.WaitProductSettled(ctx, t, cp, a.prefix, a.bound, a.pods-a.bound)
	}
	pods, _ := cluster.MustListPodsAndNodes(ctx, t, cp.Client)
	checkMigInstancesOffered(t, nodes, pods, asks)
	checkMigRefusals(ctx, t, cp, pods)
}

// migAsk is pods pods named prefix<i>, each asking for 2 instances of
// resource, of which bound are expected to bind.
type migAsk struct {
	prefix, resource string
	pods, bound      int
}

func createMigPods(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, asks []migAsk) {
	t.Helper()
	for _, a := range asks {
		for i := range a.pods {
			pod := cluster.NewPod(cluster.Namespace, fmt.Sprintf("%s%d", a.prefix, i)).
				SchedulerName(cluster.SchedulerName).Resource(a.resource, "2")
			if _, err := pod.Create(ctx, cp.Client); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkMigInstancesOffered: every bound MIG pod is on a node that offers
// its profile now (mig.config.state success), and no node has more
// instances bound than it offers.
func checkMigInstancesOffered(t *testing.T, nodes []corev1.Node, pods []corev1.Pod, asks []migAsk) {
	t.Helper()
	used := map[string]int64{} // "node resource" -> instances bound
	for i := range pods {
		p := &pods[i]
		idx := slices.IndexFunc(asks, func(a migAsk) bool { return strings.HasPrefix(p.Name, a.prefix) })
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
}

// checkMigRefusals: a 3g.20gb pod left pending was refused by gpusched for
// a100-mig-2's repartitioning.
func checkMigRefusals(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, pods []corev1.Pod) {
	t.Helper()
	reasons, err := cluster.FailedSchedulingByPod(ctx, cp.Client, cluster.Namespace)
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
		if _, err := cluster.SharePod(fmt.Sprintf("share-%d", i), 250).Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
	}
	perGpu := map[string]int{} // node/GPU id -> shares
	for i := range shares {
		pod, err := cluster.WaitBound(ctx, cp.Client, cluster.Namespace, fmt.Sprintf("share-%d", i), cluster.BindTimeout)
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
	pods, nodesNow := cluster.MustListPodsAndNodes(ctx, t, cp.Client)
	cluster.CheckDevicesOnEveryNode(t, cp, nodesNow, pods)
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
			pod := cluster.GpuPod(fmt.Sprintf("%s-%d", strings.ToLower(g.product), i), 1).NodeSelector(productLabel, g.product)
			if _, err := pod.Create(ctx, cp.Client); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, g := range groups {
		cluster.WaitProductSettled(ctx, t, cp, strings.ToLower(g.product)+"-", g.fit, g.pods-g.fit)
	}
	tolerating := cluster.GpuPod("tesla-t4-tolerating", 1).NodeSelector(productLabel, "Tesla-T4").
		Toleration(corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "inference", Effect: corev1.TaintEffectNoSchedule})
	if pod := cluster.BindPinned(ctx, t, cp, tolerating); pod.Spec.NodeName != "t4-1" {
		t.Errorf("tolerating T4 pod bound to %s; want t4-1 (t4-0 is full)", pod.Spec.NodeName)
	}
	pods, _ := cluster.MustListPodsAndNodes(ctx, t, cp.Client)
	for i := range pods {
		p := &pods[i]
		if (p.Spec.NodeName == "l4-2") || (p.Spec.NodeName == "t4-1" && p.Name != "tesla-t4-tolerating") {
			t.Errorf("%s bound to %s, which is cordoned or tainted against it", p.Name, p.Spec.NodeName)
		}
	}
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
	cluster.SetUpDemoCluster(ctx, t, cp)

	share := cluster.SharePod("share-on-l4-0", 250).NodeSelector(cluster.HostnameLabel, "l4-0")
	if _, err := share.Create(ctx, cp.Client); err != nil {
		t.Fatal(err)
	}
	twin := cluster.BindPinned(ctx, t, cp, cluster.GpuPod("whole-on-l4-0", 1).NodeSelector(cluster.HostnameLabel, "l4-0"))
	if twin.Spec.NodeName != "l4-0" {
		t.Fatalf("twin bound to %s", twin.Spec.NodeName)
	}
	last := cluster.RefusedPinned(ctx, t, cp, "share-on-l4-0")
	if !strings.Contains(last, gpuschedShareRefusal) {
		t.Errorf("FailedScheduling of share-on-l4-0: %q; want gpusched's reason %q", last, gpuschedShareRefusal)
	}
	t.Logf("FailedScheduling: %q", last)
}
