package suite_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

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
	cluster.SetUpDemoCluster(ctx, t, cp)

	began := time.Now()
	createBurst(ctx, t, cp.Client, []int{1, 2, 4, 8}, 25, 4)
	pods, nodes := waitBurstSettled(ctx, t, cp)
	t.Logf("burst settled in %v", time.Since(began).Round(time.Millisecond))

	const minBoundUnits = 53
	if bound := boundGpuUnits(pods); bound < minBoundUnits {
		t.Errorf("%d nvidia.com/gpu units bound; any settled state binds at least %d", bound, minBoundUnits)
	}
	checkPendingReasons(ctx, t, cp.Client, pods)
	cluster.CheckDevicesOnEveryNode(t, cp, nodes, pods)
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
				if _, err := cluster.GpuPod(name, size).Create(ctx, client); err != nil {
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
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, cluster.SettleTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		if pods, nodes, err = cluster.ListPodsAndNodes(ctx, cp.Client); err != nil {
			return false, nil // the next poll may do better
		}
		reasons, err := cluster.FailedSchedulingByPod(ctx, cp.Client, cluster.Namespace)
		if err != nil {
			return false, nil
		}
		unsettled = unsettledPods(pods, nodes, reasons)
		return len(unsettled) == 0, nil
	})
	if err != nil {
		t.Fatalf("burst did not settle: %v\n%d pods unsettled:\n  %s\ngpusched's view: %s",
			err, len(unsettled), strings.Join(unsettled, "\n  "), cluster.GpuschedView(cp))
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
	reasons, err := cluster.FailedSchedulingByPod(ctx, client, cluster.Namespace)
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
