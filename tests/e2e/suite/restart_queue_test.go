package suite_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// TestKilledGpuschedKeepsQueueQuotaAndGangsWhole: gpusched is killed (-9)
// while a queue of 16 GPUs runs one gang of 4 x 4 and a second gang waits
// for the quota; a third gang arrives while gpusched is down (its webhook
// too: failurePolicy Ignore lets the pods in ungated). After the restart,
// checked every 200 ms: the queue never holds more than its 16 GPUs, no
// gang is ever partly bound, no GPU is given twice. When the running gang
// finishes, the waiting gangs are bound whole, one after the other.
func TestKilledGpuschedKeepsQueueQuotaAndGangsWhole(t *testing.T) {
	policy := queuePolicy(t, map[string]int{"team-a": 16}, nil)
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	setUpDemoCluster(ctx, t, cp)
	queuedGang(ctx, t, cp, "team-a", "first", 4, 4, func(b *cluster.PodBuilder) *cluster.PodBuilder {
		return b.RunFor(15 * time.Second)
	})
	waitGangBound(ctx, t, cp, "first", 4, 30*time.Second)
	queuedGang(ctx, t, cp, "team-a", "second", 4, 4, func(b *cluster.PodBuilder) *cluster.PodBuilder {
		return b.RunFor(5 * time.Second)
	})
	holdNoneBound(ctx, t, cp, "second", time.Second)

	cp.KillGpusched()
	queuedGang(ctx, t, cp, "team-a", "third", 4, 4, nil)
	cp.StartGpusched()

	groups := []string{"first", "second", "third"}
	deadline := time.Now().Add(60 * time.Second)
	for {
		pods := queuedPods(ctx, t, cp)
		checkQueueInvariants(t, pods, groups, 16)
		if t.Failed() {
			t.FailNow()
		}
		if gangsBound(pods, "second", "third") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("second and third gangs not bound 60 s after the restart")
		}
		time.Sleep(200 * time.Millisecond)
	}
	checkGangPlacementGpus(t, gangPods(ctx, t, cp, "third"), 4)
	faultCheckLedger(ctx, t, cp.Client)
}

// queuedPods lists the test namespace's pods that have not finished.
func queuedPods(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) []corev1.Pod {
	t.Helper()
	list, err := cp.Client.CoreV1().Pods(placementNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var live []corev1.Pod
	for _, p := range list.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			live = append(live, p)
		}
	}
	return live
}

// checkQueueInvariants: the bound, unfinished pods hold at most quota GPUs,
// and each group has either none or all of its four members bound.
func checkQueueInvariants(t *testing.T, pods []corev1.Pod, groups []string, quota int64) {
	t.Helper()
	var held int64
	bound := map[string]int{}
	for i := range pods {
		if pods[i].Spec.NodeName == "" {
			continue
		}
		held += cluster.Requested(&pods[i], cluster.GpuResource)
		bound[pods[i].Labels["kueue.x-k8s.io/pod-group-name"]]++
	}
	if held > quota {
		t.Errorf("the queue's bound pods hold %d GPUs, over its quota of %d", held, quota)
	}
	for _, g := range groups {
		if n := bound[g]; n != 0 && n != 4 {
			t.Errorf("gang %s partly bound: %d of 4", g, n)
		}
	}
}

// gangsBound: every named gang has all four members bound or finished
// (the caller's list leaves finished pods out, so a gang gone from it ran).
func gangsBound(pods []corev1.Pod, groups ...string) bool {
	bound, exist := map[string]int{}, map[string]int{}
	for i := range pods {
		g := pods[i].Labels["kueue.x-k8s.io/pod-group-name"]
		exist[g]++
		if pods[i].Spec.NodeName != "" {
			bound[g]++
		}
	}
	for _, g := range groups {
		if exist[g] != 0 && bound[g] != exist[g] {
			return false
		}
	}
	return true
}
