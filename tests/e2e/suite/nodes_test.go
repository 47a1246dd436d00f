package suite_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// TestRemovedNodeIsNoLongerChosen deletes dgx-h100-1, one of the four
// nodes with 8 GPUs, right after it registered. Of four 8-GPU pods three
// bind, each to one of the three remaining H100 nodes, and one stays
// pending; a pod pinned to the removed node stays pending, refused by
// kube-scheduler (no such node) or by gpusched ("node not known to
// gpusched"), whichever saw the deletion first.
func TestRemovedNodeIsNoLongerChosen(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	const removed = "dgx-h100-1"
	if err := cp.Client.CoreV1().Nodes().Delete(ctx, removed, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	pinned := cluster.GpuPod("pinned-to-removed", 1).NodeSelector(cluster.HostnameLabel, removed)
	if _, err := pinned.Create(ctx, cp.Client); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		pod := cluster.GpuPod(fmt.Sprintf("eight-%d", i), 8).NodeSelector("node.kubernetes.io/instance-type", "dgx-h100")
		if _, err := pod.Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
	}
	cluster.WaitProductSettled(ctx, t, cp, "eight-", 3, 1)
	reason := cluster.RefusedPinned(ctx, t, cp, "pinned-to-removed")
	if !strings.Contains(reason, "didn't match Pod's node affinity/selector") && !strings.Contains(reason, "node not known to gpusched") {
		t.Errorf("pinned-to-removed: FailedScheduling %q names neither a selector mismatch nor an unknown node", reason)
	}

	pods, nodes := cluster.MustListPodsAndNodes(ctx, t, cp.Client)
	hosts := map[string]string{}
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == removed {
			t.Errorf("%s bound to removed node %s", p.Name, removed)
		}
		if other, taken := hosts[p.Spec.NodeName]; taken && p.Spec.NodeName != "" {
			t.Errorf("%s and %s, 8 GPUs each, both bound to %s", other, p.Name, p.Spec.NodeName)
		}
		hosts[p.Spec.NodeName] = p.Name
	}
	cluster.CheckDevicesOnEveryNode(t, cp, nodes, pods)
}

// TestShrunkAllocatableIsSeenByTheNextDecision: dgx-h100-3 runs a 2-GPU
// pod, so 6 of its 8 GPUs are free; then two GPUs go unhealthy (the device
// plugin lowers allocatable nvidia.com/gpu to 6, capacity stays 8), which
// leaves 4. A pod needing the 6 that were free stays pending; a 4-GPU pod
// binds, to healthy GPUs (gpusched marks the highest indices, 6 and 7,
// unhealthy: README "How gpusched sees GPUs") that the first pod does not
// hold.
//
// The 4-GPU pod is created only after the 6-GPU pod's FailedScheduling
// event, which kube-scheduler writes after it saw the new allocatable;
// gpusched's node watch has had that long to see it too.
func TestShrunkAllocatableIsSeenByTheNextDecision(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	const node = "dgx-h100-3"
	before := cluster.BindPinned(ctx, t, cp, cluster.GpuPod("before-shrink", 2).NodeSelector(cluster.HostnameLabel, node))
	beforeIDs, err := cluster.GpuIDs(before)
	if err != nil {
		t.Fatal(err)
	}

	setAllocatableGpus(ctx, t, cp.Client, node, 6)
	oldFree := cluster.GpuPod("needs-old-free", 6).NodeSelector(cluster.HostnameLabel, node)
	if _, err := oldFree.Create(ctx, cp.Client); err != nil {
		t.Fatal(err)
	}
	if reason := cluster.RefusedPinned(ctx, t, cp, "needs-old-free"); !strings.Contains(reason, cluster.GpuResource) {
		t.Errorf("needs-old-free: FailedScheduling %q does not mention %s", reason, cluster.GpuResource)
	}
	after := cluster.BindPinned(ctx, t, cp, cluster.GpuPod("fits-new-free", 4).NodeSelector(cluster.HostnameLabel, node))
	ids, err := cluster.GpuIDs(after)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("before the shrink: GPUs %v; after: GPUs %v", beforeIDs, ids)
	if slices.ContainsFunc(ids, func(id int) bool { return id >= 6 || slices.Contains(beforeIDs, id) }) {
		t.Errorf("fits-new-free got GPUs %v; want 4 of GPUs 0-5 not held by before-shrink (%v)\ngpusched's view: %s",
			ids, beforeIDs, cluster.GpuschedView(cp, node))
	}
	pods, nodes := cluster.MustListPodsAndNodes(ctx, t, cp.Client)
	cluster.CheckDevicesOnEveryNode(t, cp, nodes, pods)
}

// TestReRegisteredNodeStillCountsItsPods deletes dgx-h100-2 while a 2-GPU
// pod runs there and registers it again, as a kubelet does when its Node
// object was deleted. The pod was never deleted (pod garbage collection
// waits for that; there is no controller-manager here anyway), so it
// still holds its GPUs: a 6-GPU pod then gets the other six, and a pod
// needing 7 stays pending.
func TestReRegisteredNodeStillCountsItsPods(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nodes := cluster.SetUpDemoCluster(ctx, t, cp)
	const node = "dgx-h100-2"
	first := cluster.BindPinned(ctx, t, cp, cluster.GpuPod("before-removal", 2).NodeSelector(cluster.HostnameLabel, node))
	firstIDs, err := cluster.GpuIDs(first)
	if err != nil {
		t.Fatal(err)
	}

	if err := cp.Client.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNodeGone(ctx, t, cp.Client, node)
	if _, err := cluster.CreateNode(ctx, cp.Client, cluster.NodeNamed(nodes, node)); err != nil {
		t.Fatal(err)
	}

	tooMany := cluster.GpuPod("needs-seven", 7).NodeSelector(cluster.HostnameLabel, node)
	if _, err := tooMany.Create(ctx, cp.Client); err != nil {
		t.Fatal(err)
	}
	if reason := cluster.RefusedPinned(ctx, t, cp, "needs-seven"); !strings.Contains(reason, cluster.GpuResource) {
		t.Errorf("needs-seven: FailedScheduling %q does not mention %s", reason, cluster.GpuResource)
	}
	rest := cluster.BindPinned(ctx, t, cp, cluster.GpuPod("the-other-six", 6).NodeSelector(cluster.HostnameLabel, node))
	ids, err := cluster.GpuIDs(rest)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("before removal: GPUs %v; after re-registration: GPUs %v", firstIDs, ids)
	if slices.ContainsFunc(ids, func(id int) bool { return slices.Contains(firstIDs, id) }) {
		t.Errorf("the-other-six got GPUs %v on %s; before-removal still holds %v there\ngpusched's view: %s",
			ids, node, firstIDs, cluster.GpuschedView(cp, node))
	}
	pods, nodesNow := cluster.MustListPodsAndNodes(ctx, t, cp.Client)
	cluster.CheckDevicesOnEveryNode(t, cp, nodesNow, pods)
}

// waitNodeGone waits until the API server no longer has the node.
func waitNodeGone(ctx context.Context, t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, cluster.BindTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("node %s not deleted: %v", name, err)
	}
}

// TestPodKeepsItsHealthyGpusWhenSomeOfItsGpusFail: a pod runs on GPUs
// 4-7 of dgx-h100-0 when allocatable drops to 6. gpusched marks the
// highest indices unhealthy (README "How gpusched sees GPUs"), so two of
// the pod's GPUs failed; the pod still runs and still holds GPUs 4 and 5.
// kube-scheduler sees 2 GPUs free; a 2-GPU pod must get two of GPUs 0-3.
func TestPodKeepsItsHealthyGpusWhenSomeOfItsGpusFail(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	const node = "dgx-h100-0"
	if _, err := cluster.HeldPod("on-gpus-4-7", node, 4, "4,5,6,7").Create(ctx, cp.Client); err != nil {
		t.Fatal(err)
	}
	// Running is written by the fake kubelet after its watch saw the pod;
	// gpusched's watch has had as long.
	if _, err := cluster.WaitRunning(ctx, cp.Client, cluster.Namespace, "on-gpus-4-7", cluster.BindTimeout); err != nil {
		t.Fatal(err)
	}
	setAllocatableGpus(ctx, t, cp.Client, node, 6)

	tooMany := cluster.GpuPod("needs-three", 3).NodeSelector(cluster.HostnameLabel, node)
	if _, err := tooMany.Create(ctx, cp.Client); err != nil {
		t.Fatal(err)
	}
	if reason := cluster.RefusedPinned(ctx, t, cp, "needs-three"); !strings.Contains(reason, cluster.GpuResource) {
		t.Errorf("needs-three: FailedScheduling %q does not mention %s", reason, cluster.GpuResource)
	}
	two := cluster.BindPinned(ctx, t, cp, cluster.GpuPod("two-healthy", 2).NodeSelector(cluster.HostnameLabel, node))
	ids, err := cluster.GpuIDs(two)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("two-healthy got GPUs %v", ids)
	if slices.ContainsFunc(ids, func(id int) bool { return id > 3 }) {
		t.Errorf("two-healthy got GPUs %v on %s; GPUs 4,5 are still held by on-gpus-4-7 and 6,7 are unhealthy\ngpusched's view: %s",
			ids, node, cluster.GpuschedView(cp, node))
	}
}

// setAllocatableGpus sets the node's allocatable nvidia.com/gpu through the
// status subresource, as the kubelet does when the device plugin reports
// unhealthy devices; capacity is left alone.
func setAllocatableGpus(ctx context.Context, t *testing.T, client kubernetes.Interface, name string, gpus int64) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		node.Status.Allocatable[corev1.ResourceName(cluster.GpuResource)] = *resource.NewQuantity(gpus, resource.DecimalSI)
		_, err = client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("node %s: allocatable %s=%d: %v", name, cluster.GpuResource, gpus, err)
	}
}
