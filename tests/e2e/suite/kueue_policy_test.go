package suite_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"gpusched.io/e2e/suite/arena"
	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// kueueOnlyNamespace is the one namespace the Kueue manager of these tests
// manages: gpusched's pods live in cluster.Namespace, which Kueue leaves
// alone, so that what holds them back is gpusched's own refusal.
const kueueOnlyNamespace = "kueue-only"

// TestKueueObjectsArePolicyAndAnActiveKueueStopsGpusched: gpusched with
// --policy-source=kueue takes its queues from the cluster's Kueue objects
// (applied through Kueue v0.17.0's own webhooks, stored at v1beta2), and
// decides nothing while that Kueue manager runs: a gang in its LocalQueue
// stays gated and /readyz and /metrics say why. Once the manager is
// stopped and its webhook configurations removed, gpusched admits the gang
// from the same objects; a quota raised on the ClusterQueue afterwards
// admits a second gang without a restart (hot reload).
func TestKueueObjectsArePolicyAndAnActiveKueueStopsGpusched(t *testing.T) {
	cp, kueue := startBesideKueue(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	allowGpuschedToReadKueueObjects(ctx, t, cp)
	applyKueuePolicy(ctx, t, kueue, cluster.Namespace, 8)
	cp.StartGpusched()
	cluster.CreateDemoCluster(ctx, t, cp)

	waitReadyz(ctx, t, cp, "refusing to decide: a Kueue manager is active", true)
	first := createGpuschedGang(ctx, t, cp, "first", 2, 4)
	time.Sleep(8 * time.Second) // several passes and guard checks
	for _, pod := range podsOf(ctx, t, cp, first) {
		if cluster.Bound(&pod) || len(pod.Spec.SchedulingGates) == 0 {
			t.Fatalf("%s was admitted while Kueue's manager runs (gates %v, node %q)", pod.Name, pod.Spec.SchedulingGates, pod.Spec.NodeName)
		}
	}

	if err := kueue.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitKueueGroupBound(ctx, t, cp, first)
	waitReadyz(ctx, t, cp, "refusing to decide", false)
	waitQueueStatus(ctx, t, kueue, 1, 8)

	// A ClusterQueue naming a flavor nobody created, and a LocalQueue of
	// it: Kueue keeps both inactive and admits through the others; so does
	// gpusched, and says so in their status.
	createOrphanQueue(ctx, t, kueue)
	waitActiveCondition(ctx, t, kueue, arena.ClusterQueueResource, "", "orphan", "False", "FlavorNotFound")
	waitActiveCondition(ctx, t, kueue, arena.LocalQueueResource, cluster.Namespace, "orphan", "False", "ClusterQueueIsInactive")

	// 8 of 8 GPUs in use: a second gang of 8 waits for quota, then gets
	// it from a raised nominalQuota, read from the watch.
	second := createGpuschedGang(ctx, t, cp, "second", 2, 4)
	time.Sleep(3 * time.Second)
	for _, pod := range podsOf(ctx, t, cp, second) {
		if cluster.Bound(&pod) {
			t.Fatalf("%s bound over the ClusterQueue's quota of 8 GPUs", pod.Name)
		}
	}
	patch := `[{"op":"replace","path":"/spec/resourceGroups/0/flavors/0/resources/0/nominalQuota","value":"16"}]`
	if _, err := kueue.Dynamic.Resource(arena.ClusterQueueResource).Patch(ctx, arenaQueue, types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitKueueGroupBound(ctx, t, cp, second)
}

// allowGpuschedToReadKueueObjects creates deploy/kueue-policy's
// ClusterRole and binds the extender's identity to it, as the component
// binds gpusched's ServiceAccount: what it grants must be enough.
func allowGpuschedToReadKueueObjects(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	if err := arena.GrantGpuschedKueuePolicy(ctx, cp); err != nil {
		t.Fatal(err)
	}
}

// applyKueuePolicy applies queue arenaQueue (nominal `gpus` H100 GPUs)
// with a LocalQueue in `namespace`, through Kueue's webhooks.
func applyKueuePolicy(ctx context.Context, t *testing.T, kueue *arena.Kueue, namespace string, gpus int) {
	t.Helper()
	applyKueueQueues(ctx, t, kueue, []cluster.ClusterQueue{{
		Name: arenaQueue, GPUs: gpus, CPUs: 64,
		LocalQueues: []cluster.LocalQueue{{Namespace: namespace, Name: arenaQueue}},
	}})
}

// applyKueueQueues applies the Kueue objects (flavor, ClusterQueues,
// LocalQueues) of `queues` at v1beta2.
func applyKueueQueues(ctx context.Context, t *testing.T, kueue *arena.Kueue, queues []cluster.ClusterQueue) {
	t.Helper()
	policy, err := cluster.KueuePolicy{Queues: queues}.YAML()
	if err != nil {
		t.Fatal(err)
	}
	objects, err := arena.KueueMeaning(policy)
	if err != nil {
		t.Fatal(err)
	}
	if err := kueue.ApplyKueueObjects(ctx, objects); err != nil {
		t.Fatal(err)
	}
}

// createGpuschedGang creates a Kueue pod group of `size` pods of `gpus`
// GPUs in LocalQueue arenaQueue, for gpusched's profile.
func createGpuschedGang(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string, size, gpus int) arena.PodGroup {
	t.Helper()
	g := arena.PodGroup{Namespace: cluster.Namespace, Queue: arenaQueue, Name: name, Size: size, GPUs: gpus}
	for _, pod := range g.Pods() {
		pod.Spec.SchedulerName = cluster.SchedulerName
		if _, err := cp.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func podsOf(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, g arena.PodGroup) []corev1.Pod {
	t.Helper()
	list, err := cp.Client.CoreV1().Pods(g.Namespace).List(ctx, metav1.ListOptions{LabelSelector: arena.PodGroupNameLabel + "=" + g.Name})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != g.Size {
		t.Fatalf("group %s has %d pods, want %d", g.Name, len(list.Items), g.Size)
	}
	return list.Items
}

// waitKueueGroupBound waits (at most a Lease's expiry and a few guard checks
// past SettleTimeout) until every pod of g is bound.
func waitKueueGroupBound(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, g arena.PodGroup) {
	t.Helper()
	_, err := cluster.WaitForPods(ctx, cp.Client, g.Namespace, func(pods []corev1.Pod) bool {
		n := 0
		for i := range pods {
			if pods[i].Labels[arena.PodGroupNameLabel] == g.Name && cluster.Bound(&pods[i]) {
				n++
			}
		}
		return n == g.Size
	}, cluster.SettleTimeout+30*time.Second)
	if err != nil {
		t.Fatalf("gang %s: %v", g.Name, err)
	}
}

// waitReadyz waits until gpusched's /readyz body holds `text` (or, with
// holds false, no longer does).
func waitReadyz(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, text string, holds bool) {
	t.Helper()
	deadline := time.Now().Add(cluster.SettleTimeout)
	var body string
	for time.Now().Before(deadline) {
		code, got, err := cluster.GpuschedReadyz(ctx, cp.GpuschedURL)
		if err == nil && code == 200 && strings.Contains(got, text) == holds {
			return
		}
		body = got
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("gpusched /readyz: want it to hold %q: %v; last: %q", text, holds, body)
}

// waitQueueStatus waits until ClusterQueue arenaQueue's status, as
// gpusched writes it, has `admitted` admitted workloads holding `gpus`
// GPUs, Active with Kueue's reason Ready, and its LocalQueue the same
// count: what `kubectl get clusterqueues,localqueues` shows.
func waitQueueStatus(ctx context.Context, t *testing.T, kueue *arena.Kueue, admitted, gpus int64) {
	t.Helper()
	deadline := time.Now().Add(cluster.SettleTimeout)
	var last string
	for time.Now().Before(deadline) {
		queue, err := kueue.Dynamic.Resource(arena.ClusterQueueResource).Get(ctx, arenaQueue, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		local, err := kueue.Dynamic.Resource(arena.LocalQueueResource).Namespace(cluster.Namespace).Get(ctx, arenaQueue, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, _, _ := unstructured.NestedInt64(queue.Object, "status", "admittedWorkloads")
		gotLocal, _, _ := unstructured.NestedInt64(local.Object, "status", "admittedWorkloads")
		usage, _, _ := unstructured.NestedSlice(queue.Object, "status", "flavorsUsage")
		active, _ := arena.ConditionOf(queue, "Active")
		last = fmt.Sprintf("admitted %d (local %d), usage %v, Active %+v", got, gotLocal, usage, active)
		if got == admitted && gotLocal == admitted && active.Status == "True" && active.Reason == "Ready" &&
			strings.Contains(fmt.Sprint(usage), fmt.Sprintf("name:nvidia.com/gpu total:%d", gpus)) {
			t.Logf("ClusterQueue %s status: %s", arenaQueue, last)
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("ClusterQueue %s status never showed %d admitted holding %d GPUs; last: %s", arenaQueue, admitted, gpus, last)
}

// createOrphanQueue creates ClusterQueue "orphan", whose quota is in
// flavor a100 (no such ResourceFlavor), and its LocalQueue, at v1beta2.
func createOrphanQueue(ctx context.Context, t *testing.T, kueue *arena.Kueue) {
	t.Helper()
	queue := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
		"metadata": map[string]any{"name": "orphan"},
		"spec": map[string]any{
			"namespaceSelector": map[string]any{},
			"resourceGroups": []any{map[string]any{
				"coveredResources": []any{"nvidia.com/gpu"},
				"flavors": []any{map[string]any{"name": "a100", "resources": []any{
					map[string]any{"name": "nvidia.com/gpu", "nominalQuota": "8"}}}},
			}},
		},
	}}
	if _, err := kueue.Dynamic.Resource(arena.ClusterQueueResource).Create(ctx, queue, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	local := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
		"metadata": map[string]any{"name": "orphan", "namespace": cluster.Namespace},
		"spec":     map[string]any{"clusterQueue": "orphan"},
	}}
	if _, err := kueue.Dynamic.Resource(arena.LocalQueueResource).Namespace(cluster.Namespace).Create(ctx, local, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitActiveCondition waits until the Kueue object's condition Active, as
// gpusched writes it, has this status and reason.
func waitActiveCondition(ctx context.Context, t *testing.T, kueue *arena.Kueue, resource schema.GroupVersionResource, namespace, name, status, reason string) {
	t.Helper()
	c, err := kueue.WaitCondition(ctx, resource, namespace, name, "Active", func(c arena.Condition) bool {
		return c.Status == status && c.Reason == reason
	}, cluster.SettleTimeout)
	if err != nil {
		t.Fatalf("%s %s: Active never %s/%s (last %+v): %v", resource.Resource, name, status, reason, c, err)
	}
	t.Logf("%s %s: Active=%s %s: %s", resource.Resource, name, c.Status, c.Reason, c.Message)
}

// startBesideKueue starts a control plane whose gpusched (not started yet:
// cp.StartGpusched) takes its policy from Kueue's objects, and Kueue
// v0.17.0's manager managing kueueOnlyNamespace. Skipped where Kueue
// cannot run.
func startBesideKueue(t *testing.T) (*controlplane.ControlPlane, *arena.Kueue) {
	t.Helper()
	arena.SkipUnlessKueueRuns(t)
	cp := controlplane.Start(t, controlplane.Options{
		Run:          &controlplane.Components{Scheduler: true, Kubelet: true},
		Webhook:      true,
		GpuschedArgs: []string{"--policy-source=kueue"},
	})
	kueue := arena.StartKueue(t, cp, arena.Options{Config: arena.Config{
		Namespaces:       []string{kueueOnlyNamespace},
		WaitForPodsReady: &arena.WaitForPodsReady{Timeout: 5 * time.Minute},
	}})
	return cp, kueue
}
