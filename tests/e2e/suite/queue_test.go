package suite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// The queueing core live: quota given back by pods that finish, priority
// preemption that evicts a whole gang through the Eviction API, and a
// cohort's lender reclaiming what another queue borrowed. Pods run under
// the suite's fake kubelet, so they become Running, finish when their
// RunFor is up, and leave once their deletion starts.

// queuePolicy: flavor h100 (the demo cluster's 32 H100 GPUs), ClusterQueues
// of `quotas` (name -> nominal GPUs) in cohort research, each reached from
// the test namespace by a LocalQueue of the same name. preemption sets a
// ClusterQueue's spec.preemption.
func queuePolicy(t testing.TB, quotas map[string]int, preemption map[string]map[string]string) string {
	t.Helper()
	queues := cluster.ResearchQueues(cluster.Namespace, quotas)
	for i := range queues {
		queues[i].Preemption = preemption[queues[i].Name]
	}
	return writePolicy(t, cluster.KueuePolicy{Queues: queues})
}

// writePolicy writes the policy into the test's temporary directory.
func writePolicy(t testing.TB, policy cluster.KueuePolicy) string {
	t.Helper()
	path, err := policy.WriteFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// queuedGang creates a Kueue pod group of `count` pods of `gpus` GPUs each
// in LocalQueue `queue`; edit may change each pod first.
func queuedGang(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, queue, group string, count, gpus int,
	edit func(*cluster.PodBuilder) *cluster.PodBuilder) {
	t.Helper()
	for i := 0; i < count; i++ {
		b := cluster.GpuPod(fmt.Sprintf("%s-%d", group, i), gpus).
			Label("kueue.x-k8s.io/queue-name", queue).
			Label("kueue.x-k8s.io/pod-group-name", group).
			Annotation("kueue.x-k8s.io/pod-group-total-count", fmt.Sprint(count))
		if edit != nil {
			b = edit(b)
		}
		if _, err := b.Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
	}
}

// gangPods lists the pods of a Kueue pod group (deleted ones excluded).
func gangPods(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, group string) []corev1.Pod {
	t.Helper()
	return selectedPods(ctx, t, cp, "kueue.x-k8s.io/pod-group-name="+group)
}

// selectedPods lists the test namespace's pods matching a label selector.
func selectedPods(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, selector string) []corev1.Pod {
	t.Helper()
	list, err := cp.Client.CoreV1().Pods(cluster.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func countBound(pods []corev1.Pod) int {
	n := 0
	for i := range pods {
		if pods[i].Spec.NodeName != "" {
			n++
		}
	}
	return n
}

// waitGangBound waits until all `count` members of the group are bound.
func waitGangBound(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, group string, count int, timeout time.Duration) []corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		pods := gangPods(ctx, t, cp, group)
		if len(pods) == count && countBound(pods) == count {
			return pods
		}
		if time.Now().After(deadline) {
			t.Fatalf("gang %s: %d of %d pods exist, %d bound after %v", group, len(pods), count, countBound(pods), timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// holdNoneBound checks for d that no member of the group is bound.
func holdNoneBound(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, group string, d time.Duration) {
	t.Helper()
	holdNoneBoundSelected(ctx, t, cp, "kueue.x-k8s.io/pod-group-name="+group, d)
}

// holdNoneBoundSelected checks for d that no pod the label selector
// matches is bound (gangs without Kueue's group label: a Job's pods).
func holdNoneBoundSelected(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, selector string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if n := countBound(selectedPods(ctx, t, cp, selector)); n != 0 {
			t.Fatalf("pods %s: %d bound while they must wait", selector, n)
		}
	}
}

// TestQueueAtQuotaHoldsGangUntilRunningGangSucceeds: a queue of 16 GPUs
// runs a gang of 4 x 4; a second gang waits (none of it bound) until the
// first one's pods succeed, then it is admitted and bound whole.
func TestQueueAtQuotaHoldsGangUntilRunningGangSucceeds(t *testing.T) {
	policy := queuePolicy(t, map[string]int{"team-a": 16}, nil)
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	const runFor = 8 * time.Second
	queuedGang(ctx, t, cp, "team-a", "first", 4, 4, func(b *cluster.PodBuilder) *cluster.PodBuilder {
		return b.RunFor(runFor)
	})
	waitGangBound(ctx, t, cp, "first", 4, 30*time.Second)
	queuedGang(ctx, t, cp, "team-a", "second", 4, 4, nil)
	holdNoneBound(ctx, t, cp, "second", 3*time.Second)
	waitGangBound(ctx, t, cp, "second", 4, 60*time.Second)
	for _, p := range gangPods(ctx, t, cp, "first") {
		if p.Status.Phase != corev1.PodSucceeded {
			t.Errorf("%s: %s while the second gang holds the queue's quota", p.Name, p.Status.Phase)
		}
	}
}

func createPriorityClass(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string, value int32) {
	t.Helper()
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
	if _, err := cp.Client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil &&
		!apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// waitGangGone waits until no member of the group exists.
func waitGangGone(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, group string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for len(gangPods(ctx, t, cp, group)) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("gang %s: %d members still exist after %v", group, len(gangPods(ctx, t, cp, group)), timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestHigherPriorityGangEvictsLowerPriorityGangWhole: the whole cluster
// (32 GPUs) runs a low-priority gang of 4 x 8; a high-priority gang of the
// same size in the same queue evicts all four members through the Eviction
// API and is bound in their place.
func TestHigherPriorityGangEvictsLowerPriorityGangWhole(t *testing.T) {
	policy := queuePolicy(t, map[string]int{"team-a": 32}, map[string]map[string]string{
		"team-a": {"withinClusterQueue": "LowerPriority"}})
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	createPriorityClass(ctx, t, cp, "e2e-low", 100)
	createPriorityClass(ctx, t, cp, "e2e-high", 1000)
	queuedGang(ctx, t, cp, "team-a", "low", 4, 8, func(b *cluster.PodBuilder) *cluster.PodBuilder {
		return b.PriorityClass("e2e-low")
	})
	waitGangBound(ctx, t, cp, "low", 4, 30*time.Second)
	queuedGang(ctx, t, cp, "team-a", "high", 4, 8, func(b *cluster.PodBuilder) *cluster.PodBuilder {
		return b.PriorityClass("e2e-high")
	})
	waitGangGone(ctx, t, cp, "low", 60*time.Second)
	checkGangPlacementGpus(t, waitGangBound(ctx, t, cp, "high", 4, 60*time.Second), 8)
}

// TestCohortLenderReclaimsBorrowedQuota: team-b (16 GPUs of its own)
// borrows team-a's idle 16 for a second gang; when team-a's own gang
// arrives, exactly one of team-b's gangs is evicted whole and team-a's is
// bound.
func TestCohortLenderReclaimsBorrowedQuota(t *testing.T) {
	policy := queuePolicy(t, map[string]int{"team-a": 16, "team-b": 16}, map[string]map[string]string{
		"team-a": {"reclaimWithinCohort": "Any"}})
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	queuedGang(ctx, t, cp, "team-b", "b1", 4, 4, nil)
	waitGangBound(ctx, t, cp, "b1", 4, 30*time.Second)
	queuedGang(ctx, t, cp, "team-b", "b2", 4, 4, nil)
	waitGangBound(ctx, t, cp, "b2", 4, 30*time.Second)
	queuedGang(ctx, t, cp, "team-a", "a1", 4, 4, nil)
	checkGangPlacementGpus(t, waitGangBound(ctx, t, cp, "a1", 4, 60*time.Second), 4)
	b1, b2 := gangPods(ctx, t, cp, "b1"), gangPods(ctx, t, cp, "b2")
	whole := func(pods []corev1.Pod) bool { return len(pods) == 4 && countBound(pods) == 4 }
	if !(len(b1) == 0 && whole(b2)) && !(len(b2) == 0 && whole(b1)) {
		t.Errorf("after the reclaim: b1 has %d pods (%d bound), b2 %d (%d bound); want one gang whole and the other gone",
			len(b1), countBound(b1), len(b2), countBound(b2))
	}
}

// checkGangPlacementGpus: checkGangPlacement for members of `gpus` GPUs.
func checkGangPlacementGpus(t *testing.T, pods []corev1.Pod, gpus int) {
	t.Helper()
	used := map[string]map[int]string{}
	for i := range pods {
		p := &pods[i]
		ids, err := cluster.GpuIDs(p)
		if err != nil || len(ids) != gpus {
			t.Errorf("%s: gpu ids %v (%v), want %d", p.Name, ids, err, gpus)
			continue
		}
		if used[p.Spec.NodeName] == nil {
			used[p.Spec.NodeName] = map[int]string{}
		}
		for _, id := range ids {
			if other, taken := used[p.Spec.NodeName][id]; taken {
				t.Errorf("GPU %d of %s given to %s and %s", id, p.Spec.NodeName, other, p.Name)
			}
			used[p.Spec.NodeName][id] = p.Name
		}
	}
}
