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

	"gpusched.io/e2e/suite/arena"
	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// The switch under load (issue M §3): two ClusterQueues of 50 GPUs on 16
// nodes of 8 GPUs, each with 100 one-GPU pods from Kueue's users (10 pod
// groups of 4 and 60 pods alone), 200 in all. Under Kueue v0.17.0 team-a's
// half is admitted and runs; with the default scheduler stopped, team-b's
// half is admitted and waits for a node, ungated. Kueue is stopped and its
// webhook configurations deleted, gpusched starts on the same objects, and
// only once its ClusterQueue status shows team-b's 50 admitted GPUs (they
// are adopted unbound) does the default scheduler come back. Then
// everything runs to the end. At every poll no queue has more than its 50
// GPUs admitted (ungated and not ended); no pod is recreated, evicted or
// preempted; every pod ends Succeeded, and Kueue's finalizer is released
// from all 200.
const (
	loadQueueGPUs   = 50
	loadGroups      = 10
	loadGroupSize   = 4
	loadSingles     = 60
	loadRunFor      = 30 * time.Second
	loadPodsPerTeam = loadGroups*loadGroupSize + loadSingles
)

var loadTeams = []string{"team-a", "team-b"}

func TestSwitchFromKueueUnderLoadKeepsEveryQueueInQuotaAndEvictsNothing(t *testing.T) {
	cp, kueue := startBesideKueue(t)
	defaultScheduler := startDefaultScheduler(cp, "default")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	allowGpuschedToReadKueueObjects(ctx, t, cp)
	setUpLoadCluster(ctx, t, cp, kueue)

	createLoadTeam(ctx, t, cp, "team-a")
	waitAdmittedGPUs(ctx, t, cp, "team-a", loadQueueGPUs)
	defaultScheduler.Stop()
	createLoadTeam(ctx, t, cp, "team-b")
	waitAdmittedGPUs(ctx, t, cp, "team-b", loadQueueGPUs)
	uids := podUIDs(ctx, t, cp)
	if len(uids) != 2*loadPodsPerTeam {
		t.Fatalf("%d pods before the switch, want %d", len(uids), 2*loadPodsPerTeam)
	}
	t.Logf("before the switch: %s", loadCensus(podsIn(ctx, t, cp)))

	if err := kueue.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	cp.StartGpusched()
	waitStatusUsage(ctx, t, kueue, "team-b", loadQueueGPUs)
	startDefaultScheduler(cp, "default-again")

	pollUntilAllSucceeded(ctx, t, cp)
	for _, pod := range podsIn(ctx, t, cp) {
		if uid, ok := uids[pod.Name]; !ok || uid != pod.UID {
			t.Errorf("pod %s was recreated (uid %s, was %s)", pod.Name, pod.UID, uid)
		}
	}
	for _, reason := range []string{"Preempted", "Evicted", "PodsReadyTimeout"} {
		events, err := cp.Client.CoreV1().Events(kueueOnlyNamespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + reason})
		if err != nil {
			t.Fatal(err)
		}
		if len(events.Items) != 0 {
			t.Errorf("%d %s events after the switch: %s", len(events.Items), reason, events.Items[0].Message)
		}
	}
	waitKueueFinalizersReleased(ctx, t, cp, 2*loadPodsPerTeam, "team-a-single-0")
}

func startDefaultScheduler(cp *controlplane.ControlPlane, name string) *controlplane.BenchScheduler {
	return cp.StartBenchScheduler(controlplane.BenchSchedulerOptions{Name: name, Config: func(config map[string]any) {
		arena.DefaultSchedulerProfile(config)
		config["leaderElection"] = map[string]any{"leaderElect": false}
	}})
}

func setUpLoadCluster(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, kueue *arena.Kueue) {
	t.Helper()
	if err := controlplane.EnsureNamespace(ctx, cp.Client, kueueOnlyNamespace); err != nil {
		t.Fatal(err)
	}
	var queues []cluster.ClusterQueue
	for _, team := range loadTeams {
		queues = append(queues, cluster.ClusterQueue{Name: team, GPUs: loadQueueGPUs, CPUs: 64,
			LocalQueues: []cluster.LocalQueue{{Namespace: kueueOnlyNamespace, Name: team}}})
	}
	applyKueueQueues(ctx, t, kueue, queues)
	nodes := &arena.Scenario{Nodes: arena.NodeSpec{Groups: []arena.NodeGroup{{Count: 16, GPUs: 8}}}}
	if err := arena.CreateScenarioNodes(ctx, cp.Client, cp.Repo, nodes); err != nil {
		t.Fatal(err)
	}
}

// createLoadTeam creates the team's pod groups, then its pods alone, for
// the default scheduler as Kueue's users make them.
func createLoadTeam(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, team string) {
	t.Helper()
	for g := range loadGroups {
		createKueueGroup(ctx, t, cp, arena.PodGroup{Namespace: kueueOnlyNamespace, Queue: team,
			Name: fmt.Sprintf("%s-group-%d", team, g), Size: loadGroupSize, GPUs: 1}, loadRunFor)
	}
	err := cluster.Parallel(loadSingles, 8, func(i int) error {
		pod := cluster.NewPod(kueueOnlyNamespace, fmt.Sprintf("%s-single-%d", team, i)).
			Gpus(1).RunFor(loadRunFor).Label(arena.QueueNameLabel, team).Build()
		_, err := cp.Client.CoreV1().Pods(kueueOnlyNamespace).Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// admittedGPUs are, per queue, the GPUs of pods some admission released
// (no scheduling gate) that have not ended: bound or about to be.
func admittedGPUs(pods []corev1.Pod) map[string]int {
	out := map[string]int{}
	for i := range pods {
		pod := &pods[i]
		if len(pod.Spec.SchedulingGates) != 0 || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		out[pod.Labels[arena.QueueNameLabel]] += cluster.PodGpus(pod)
	}
	return out
}

func loadCensus(pods []corev1.Pod) string {
	phases := map[string]int{}
	for i := range pods {
		state := string(pods[i].Status.Phase)
		if len(pods[i].Spec.SchedulingGates) != 0 {
			state += "/gated"
		} else if !cluster.Bound(&pods[i]) {
			state += "/unbound"
		}
		phases[pods[i].Labels[arena.QueueNameLabel]+":"+state]++
	}
	return fmt.Sprint(phases, " admitted GPUs ", admittedGPUs(pods))
}

func waitAdmittedGPUs(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, team string, gpus int) {
	t.Helper()
	deadline := time.Now().Add(cluster.SettleTimeout)
	for {
		pods := podsIn(ctx, t, cp)
		if admittedGPUs(pods)[team] == gpus {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Kueue never admitted %d GPUs in %s: %s", gpus, team, loadCensus(pods))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitStatusUsage waits until gpusched's status of ClusterQueue `queue`
// shows `gpus` GPUs in use.
func waitStatusUsage(ctx context.Context, t *testing.T, kueue *arena.Kueue, queue string, gpus int) {
	t.Helper()
	deadline := time.Now().Add(cluster.SettleTimeout)
	want := fmt.Sprintf("name:nvidia.com/gpu total:%d", gpus)
	var last string
	for time.Now().Before(deadline) {
		cq, err := kueue.Dynamic.Resource(arena.ClusterQueueResource).Get(ctx, queue, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		usage, _, _ := unstructured.NestedSlice(cq.Object, "status", "flavorsUsage")
		if last = fmt.Sprint(usage); strings.Contains(last, want) {
			t.Logf("ClusterQueue %s usage as gpusched writes it: %s", queue, last)
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("ClusterQueue %s never showed %d GPUs in use; last %s", queue, gpus, last)
}

// pollUntilAllSucceeded fails at the first poll that sees a queue over its
// quota, and returns once every pod has succeeded.
func pollUntilAllSucceeded(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	polls := 0
	for {
		pods := podsIn(ctx, t, cp)
		polls++
		for team, gpus := range admittedGPUs(pods) {
			if gpus > loadQueueGPUs {
				t.Fatalf("poll %d: queue %s has %d GPUs admitted, quota %d: %s", polls, team, gpus, loadQueueGPUs, loadCensus(pods))
			}
		}
		succeeded := 0
		for i := range pods {
			if pods[i].Status.Phase == corev1.PodSucceeded {
				succeeded++
			}
		}
		if succeeded == 2*loadPodsPerTeam {
			t.Logf("all %d pods succeeded after %d polls, no queue over its quota", succeeded, polls)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d pods succeeded: %s", succeeded, 2*loadPodsPerTeam, loadCensus(pods))
		}
		time.Sleep(500 * time.Millisecond)
	}
}
