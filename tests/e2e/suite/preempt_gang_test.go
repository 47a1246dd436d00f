package suite_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// kube-scheduler's own preemption, for a high-priority pod outside the
// queues, goes through gpusched's preempt verb, which never lets it split
// a gang nor take a queue below its nominal quota.

// preemptGangPolicy: ClusterQueues in cohort research covering GPUs and the
// cpu every test pod requests (Kueue admits only what its queue covers).
// team-a has no quota of its own and borrows all it runs from team-b's 16
// GPUs and 64 cpu, so evicting any of its workloads takes only borrowed
// capacity: what keeps its gang is the gang rule alone. team-c runs within
// its own 8 GPUs and 8 cpu.
var preemptGangPolicy = cluster.KueuePolicy{Queues: []cluster.ClusterQueue{
	{Name: "team-a", Cohort: "research", GPUs: 0, CPUs: 0,
		LocalQueues: []cluster.LocalQueue{{Namespace: preemptNamespace, Name: "team-a"}}},
	{Name: "team-b", Cohort: "research", GPUs: 16, CPUs: 64},
	{Name: "team-c", GPUs: 8, CPUs: 8,
		LocalQueues: []cluster.LocalQueue{{Namespace: preemptNamespace, Name: "team-c"}}},
}}

// preemptGangHold is how long a refused preemptor is watched: kube-scheduler
// retries it after 1 s, 2 s, 4 s (backoff), each time through the verb.
const preemptGangHold = 8 * time.Second

// TestKubeSchedulerPreemptionNeverSplitsAGangNorAQueueGuarantee:
//
//	phase 1: pg-0 and pg-1 (8 GPUs each) run gang ring (2 x 8, team-a,
//	         priority 0); a pod outside the queues asks for 8 GPUs at
//	         priority 1000. Each node's only victim is half of the gang:
//	         gpusched refuses both, the pod stays Pending, the gang whole.
//	phase 2: pg-2 joins, already holding a low-priority pod outside the
//	         queues (priority 100). kube-scheduler by its own rules would
//	         rather evict a priority-0 gang member; gpusched keeps only
//	         pg-2, so that pod is the victim and the preemptor binds there.
//	phase 3: pg-3 joins, running team-c's pod (8 of its nominal 8, as
//	         admitted before a restart), and a second preemptor comes: its
//	         only new victim would take team-c below its guarantee, so it
//	         stays Pending too.
//
// The webhook is off: it would gate the pods outside the queues too, and
// the queue's pods take the label + nominatedNodeName path.
func TestKubeSchedulerPreemptionNeverSplitsAGangNorAQueueGuarantee(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{Policy: writePolicy(t, preemptGangPolicy)})
	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()
	preemptCreateNodes(ctx, t, cp, "pg-0", "pg-1")
	preemptCreatePriorityClasses(ctx, t, cp.Client)
	if err := controlplane.EnsureNamespace(ctx, cp.Client, preemptNamespace); err != nil {
		t.Fatal(err)
	}
	queuedGang(ctx, t, cp, "team-a", "ring", 2, 8, nil)
	gang := waitGangBound(ctx, t, cp, "ring", 2, 60*time.Second)

	// Phase 1.
	preemptGangCreatePreemptor(ctx, t, cp, "urgent")
	preemptGangCheckRefused(ctx, t, cp, "urgent", gang, "gang e2e/ring is evicted whole or not at all")

	// Phase 2: the pod is bound to pg-2 before the node exists, so the
	// node never shows free GPUs the preemptor could take without a victim.
	low := preemptGangCreateHeld(ctx, t, cp, "low", "pg-2", "e2e-low")
	preemptCreateNodes(ctx, t, cp, "pg-2")
	preemptor, err := cluster.WaitBound(ctx, cp.Client, preemptNamespace, "urgent", 60*time.Second)
	if err != nil {
		t.Fatalf("the preemptor never bound: %v\ngpusched preempt log: %q", err, preemptGangLog(t, cp, "urgent"))
	}
	if preemptor.Spec.NodeName != "pg-2" {
		t.Fatalf("preemptor bound to %s, want pg-2 (the gang's nodes are pg-0 and pg-1)", preemptor.Spec.NodeName)
	}
	cluster.WaitGone(ctx, t, cp.Client, *low)
	preemptGangCheckWhole(ctx, t, cp, gang)
	if lines := preemptGangLog(t, cp, "urgent"); !slices.ContainsFunc(lines, func(l string) bool {
		return strings.Contains(l, "proposed=3 kept=1")
	}) {
		t.Errorf("gpusched.log has no preempt call with 3 nodes proposed and 1 kept: %q", lines)
	}

	// Phase 3: the node first, so that the queueing core adopts the pod in
	// the pass its creation wakes (a pod whose node is unknown waits for a
	// later one), before any preemptor exists.
	preemptCreateNodes(ctx, t, cp, "pg-3")
	preemptGangCreateHeld(ctx, t, cp, "guaranteed", "pg-3", "e2e-low")
	if _, err := cluster.WaitRunning(ctx, cp.Client, preemptNamespace, "guaranteed", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	preemptGangCreatePreemptor(ctx, t, cp, "urgent-2")
	preemptGangCheckRefused(ctx, t, cp, "urgent-2", gang, "ClusterQueue team-c would fall below its nominal quota")
	faultCheckLedger(ctx, t, cp.Client)
}

// preemptGangCreatePreemptor: 8 GPUs, priority 1000, no queue, no gang.
func preemptGangCreatePreemptor(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string) {
	t.Helper()
	_, err := cluster.NewPod(preemptNamespace, name).SchedulerName(cluster.SchedulerName).
		Gpus(8).PriorityClass("e2e-high").Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
}

// preemptGangCreateHeld binds an 8-GPU pod to node (which need not exist
// yet) on GPUs 0-7. "guaranteed" is team-c's, as its admission would have
// left it; any other name is outside the queues.
func preemptGangCreateHeld(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name, node, priority string) *corev1.Pod {
	t.Helper()
	b := cluster.NewPod(preemptNamespace, name).SchedulerName(cluster.SchedulerName).NodeName(node).
		Gpus(8).PriorityClass(priority).Annotation(cluster.GpuIDsAnnotation, "0,1,2,3,4,5,6,7")
	if name == "guaranteed" {
		b.Label("kueue.x-k8s.io/queue-name", "team-c").
			Label("gpusched.io/admitted", "true").
			Annotation("gpusched.io/assigned-node", node)
	}
	pod, err := b.Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// preemptGangCheckRefused: the preemptor is refused (kube-scheduler found
// no candidate left), stays Pending across retries, gpusched says why in
// its log, and the gang is whole.
func preemptGangCheckRefused(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string, gang []corev1.Pod, why string) {
	t.Helper()
	cluster.WaitFailedSchedulingContaining(ctx, t, cp.Client, name, "no candidate node for preemption", 60*time.Second)
	if err := cluster.StaysPending(ctx, cp.Client, preemptNamespace, name, preemptGangHold); err != nil {
		t.Fatal(err)
	}
	lines := preemptGangLog(t, cp, name)
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, why) }) {
		t.Errorf("gpusched.log never says %q for %s: %q", why, name, lines)
	}
	preemptGangCheckWhole(ctx, t, cp, gang)
}

// preemptGangCheckWhole: every member is the same pod, bound where it was,
// and not being deleted.
func preemptGangCheckWhole(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, gang []corev1.Pod) {
	t.Helper()
	now := cluster.PodsByName(ctx, t, cp.Client, preemptNamespace)
	for _, before := range gang {
		p, ok := now[before.Name]
		switch {
		case !ok || p.UID != before.UID:
			t.Errorf("gang member %s (uid %s) was deleted", before.Name, before.UID)
		case p.DeletionTimestamp != nil:
			t.Errorf("gang member %s is being deleted", before.Name)
		case p.Spec.NodeName != before.Spec.NodeName:
			t.Errorf("gang member %s is on %q, was on %q", before.Name, p.Spec.NodeName, before.Spec.NodeName)
		}
	}
}

func preemptGangLog(t *testing.T, cp *controlplane.ControlPlane, pod string) []string {
	t.Helper()
	lines, err := cluster.GrepLog(filepath.Join(cp.Dir, "gpusched.log"), "preempt pod="+preemptNamespace+"/"+pod)
	if err != nil {
		t.Error(err)
	}
	return lines
}
