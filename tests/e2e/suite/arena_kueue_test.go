package suite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"gpusched.io/e2e/suite/arena"
	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// arenaQueue is the Kueue arm's queue: ClusterQueue and LocalQueue
// "arena" (in cluster.Namespace) with a nominal quota of 8 H100 GPUs and
// 64 cpu, in cohort "arena", which has no other member to borrow from.
// It is written as gpusched's --policy (cluster.KueuePolicy: v1beta1
// objects, which Kueue v0.17 stores as v1beta2 through its conversion
// webhook) and given Kueue's reading by arena.KueueMeaning.
const arenaQueue = "arena"

const arenaCohort = `apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata:
  name: arena
`

// TestKueueArmAdmitsAPodGroup: Kueue v0.17.0, installed from its release's
// manifests and running beside kube-scheduler's default profile (no
// gpusched) on Kubernetes 1.35, gates a pod group, admits it whole when it
// fits its ClusterQueue's quota, and keeps a second group that does not
// fit gated. On another release it is skipped (Kueue v0.17 is tested on
// 1.33 to 1.35).
func TestKueueArmAdmitsAPodGroup(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{
		Run:             &controlplane.Components{Scheduler: true, Kubelet: true},
		SchedulerConfig: arena.DefaultSchedulerProfile,
	})
	kueue := arena.StartKueue(t, cp, arena.Options{Config: arena.Config{
		Namespaces:       []string{cluster.Namespace},
		WaitForPodsReady: &arena.WaitForPodsReady{Timeout: 5 * time.Minute},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cluster.CreateDemoCluster(ctx, t, cp)
	applyArenaQueue(ctx, t, kueue)

	// 2 pods x 4 GPUs = 8 GPUs: the whole quota.
	fits := arena.PodGroup{Namespace: cluster.Namespace, Queue: arenaQueue, Name: "fits", Size: 2, GPUs: 4}
	createManagedGroup(ctx, t, cp, fits)
	pods := waitGroup(ctx, t, cp, fits, admittedAndBound)
	for _, pod := range pods {
		t.Logf("%s: admitted, bound to %s, nodeSelector %v", pod.Name, pod.Spec.NodeName, pod.Spec.NodeSelector)
	}
	if _, err := kueue.WaitCondition(ctx, arena.WorkloadResource, cluster.Namespace, fits.Name, "PodsReady", arena.IsTrue, cluster.SettleTimeout); err != nil {
		t.Fatal(err)
	}

	// Another 2 x 4: 8 + 8 = 16 > 8 GPUs, and nothing to borrow.
	waits := arena.PodGroup{Namespace: cluster.Namespace, Queue: arenaQueue, Name: "waits", Size: 2, GPUs: 4}
	createManagedGroup(ctx, t, cp, waits)
	pending, err := kueue.WaitCondition(ctx, arena.WorkloadResource, cluster.Namespace, waits.Name, "QuotaReserved", arena.IsFalse, cluster.SettleTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("workload %s: QuotaReserved=False (%s): %s", waits.Name, pending.Reason, pending.Message)
	if !strings.Contains(pending.Message, "insufficient") {
		t.Errorf("workload %s pending for %q, want insufficient quota", waits.Name, pending.Message)
	}
	for _, pod := range waitGroup(ctx, t, cp, waits, gatedAndUnbound) {
		t.Logf("%s: still gated by %s", pod.Name, arena.AdmissionGate)
	}
}

// applyArenaQueue applies the cohort and the queue (cluster.KueuePolicy,
// the builder of gpusched's --policy) and waits until Kueue says the
// ClusterQueue is Active: its flavor exists and Kueue's controllers run.
func applyArenaQueue(ctx context.Context, t *testing.T, kueue *arena.Kueue) {
	t.Helper()
	policy, err := cluster.KueuePolicy{Queues: []cluster.ClusterQueue{{
		Name: arenaQueue, Cohort: "arena", GPUs: 8, CPUs: 64,
		LocalQueues: []cluster.LocalQueue{{Namespace: cluster.Namespace, Name: arenaQueue}},
	}}}.YAML()
	if err != nil {
		t.Fatal(err)
	}
	objects, err := arena.KueueMeaning(arenaCohort + "---\n" + policy)
	if err != nil {
		t.Fatal(err)
	}
	if err := kueue.ApplyKueueObjects(ctx, objects); err != nil {
		t.Fatal(err)
	}
	if _, err := kueue.WaitCondition(ctx, arena.ClusterQueueResource, "", arenaQueue, "Active", arena.IsTrue, cluster.SettleTimeout); err != nil {
		t.Fatal(err)
	}
	// Written as v1beta1 `cohort`, read as v1beta2 `cohortName`: the
	// conversion webhook on loopback answered.
	queue, err := kueue.Dynamic.Resource(arena.ClusterQueueResource).Get(ctx, arenaQueue, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cohort, _, _ := unstructured.NestedString(queue.Object, "spec", "cohortName"); cohort != "arena" {
		t.Errorf("ClusterQueue %s as v1beta2: spec.cohortName %q, want \"arena\"", arenaQueue, cohort)
	}
}

// createManagedGroup creates the group's pods and checks that Kueue's
// webhook took each in: gated, labelled managed, with its finalizer.
func createManagedGroup(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, g arena.PodGroup) {
	t.Helper()
	created, err := g.Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
	for _, pod := range created {
		if err := arena.ManagedByKueue(pod); err != nil {
			t.Fatal(err)
		}
	}
}

// admittedAndBound: Kueue lifted the gate and kube-scheduler bound it.
func admittedAndBound(pod *corev1.Pod) bool { return !arena.Gated(pod) && cluster.Bound(pod) }

// gatedAndUnbound: still held by Kueue's gate, so never scheduled.
func gatedAndUnbound(pod *corev1.Pod) bool { return arena.Gated(pod) && !cluster.Bound(pod) }

// waitGroup waits until every pod of g satisfies pred and returns them.
func waitGroup(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, g arena.PodGroup, pred func(*corev1.Pod) bool) []corev1.Pod {
	t.Helper()
	pods, err := cluster.WaitForPods(ctx, cp.Client, g.Namespace, func(pods []corev1.Pod) bool {
		n := 0
		for i := range pods {
			if pods[i].Labels[arena.PodGroupNameLabel] != g.Name {
				continue
			}
			if !pred(&pods[i]) {
				return false
			}
			n++
		}
		return n == g.Size
	}, cluster.SettleTimeout)
	if err != nil {
		t.Fatal(err)
	}
	var group []corev1.Pod
	for _, pod := range pods {
		if pod.Labels[arena.PodGroupNameLabel] == g.Name {
			group = append(group, pod)
		}
	}
	return group
}
