package benchkit

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// QueuedThroughput (BenchmarkQueuedThroughput) measures what a Kueue queue costs the pods
// that pass through it, in BenchmarkKubeSchedulerThroughput's conditions
// (same nodes, flags, client limits, a kube-scheduler per arm calling
// gpusched as deploy/ configures it) with gpusched's admission webhook
// registered in every arm:
//
//	unqueued: single-GPU pods in no queue (the webhook lets them through
//	          ungated): created -> bound as arm b of the throughput
//	          benchmark;
//	queued:   the same pods in a LocalQueue whose ClusterQueue has room for
//	          all: gated by the webhook, admitted by gpusched's admission
//	          loop (gate lifted), then bound by kube-scheduler;
//	gangs:    E2E_BENCH_GANGS Kueue pod groups of E2E_BENCH_GANG_SIZE
//	          single-GPU members in the same queue, all created in one
//	          burst, against unqueued_gang_pods: as many unqueued single
//	          pods (the unqueued arm itself when the counts are equal).
//
// Each arm reports created -> bound pods/s and CPU ms per pod per process
// (kube-apiserver, etcd, kube-scheduler, gpusched, bench_client); a round
// reports queued/unqueued pods/s and the gangs' time to all bound over the
// unqueued pods'. Sized by E2E_BENCH_NODES (comma-separated, default 50),
// E2E_BENCH_PODS (default 40), E2E_BENCH_GANGS (default 5; 0 skips the
// gang arms), E2E_BENCH_GANG_SIZE (default 4), E2E_BENCH_ROUNDS (1);
// E2E_BENCH_OUT names a JSON result file. The sizes:
//
//	E2E_BENCH_NODES=1000,5000 E2E_BENCH_PODS=2000 E2E_BENCH_GANGS=50 E2E_BENCH_GANG_SIZE=8 \
//	  e2e.test -test.run '^$' -test.bench '^BenchmarkQueuedThroughput$' -test.benchtime 1x
func QueuedThroughput(b *testing.B) {
	s := queuedSettingsFromEnv(b)
	report := newQueuedReport(s)
	report.Runs = tpPerNodeCount(b, s.nodeCounts, "median-queued/unqueued",
		func(b *testing.B, nodes int) []queuedRun { return runQueued(b, s, report, nodes) },
		func(run queuedRun) float64 { return run.Ratio })
	finishThroughputReport(b, s.out, &report.Conditions, report)
}

// queuedQueue is the LocalQueue (in each queued arm's namespace) and the
// ClusterQueue it reaches.
const queuedQueue = "bench"

type queuedSettings struct {
	throughputSettings
	gangs, gangSize int
}

func queuedSettingsFromEnv(b *testing.B) queuedSettings {
	b.Helper()
	s := queuedSettings{
		throughputSettings: throughputSettingsFromEnv(b),
		gangs:              EnvInts(b, "E2E_BENCH_GANGS", []int{5})[0],
		gangSize:           EnvInts(b, "E2E_BENCH_GANG_SIZE", []int{4})[0],
	}
	for _, n := range s.nodeCounts {
		if s.gangs < 0 || s.gangSize <= 0 || s.gangs*s.gangSize > 8*n {
			b.Fatalf("E2E_BENCH_GANGS=%d, E2E_BENCH_GANG_SIZE=%d on %d nodes: want gangs of 1 or more members fitting 8 GPUs a node",
				s.gangs, s.gangSize, n)
		}
	}
	return s
}

type queuedReport struct {
	Benchmark  string              `json:"benchmark"`
	Conditions throughputCondition `json:"conditions"`
	Arms       map[string]string   `json:"arms"`
	Gangs      int                 `json:"gangs"`
	GangSize   int                 `json:"gang_size"`
	Runs       []queuedRun         `json:"runs"`
}

type queuedRun struct {
	Nodes            int           `json:"nodes"`
	Round            int           `json:"round"`
	Pods             int           `json:"pods"`
	NodeSetupSeconds float64       `json:"node_setup_seconds"`
	Unqueued         throughputArm `json:"unqueued"`
	Queued           throughputArm `json:"queued"`
	// Ratio is Queued.PodsPerSecond / Unqueued.PodsPerSecond.
	Ratio float64 `json:"ratio_queued_over_unqueued"`
	// Gangs and UnqueuedGangPods are absent without gangs.
	Gangs            *throughputArm `json:"gangs,omitempty"`
	UnqueuedGangPods *throughputArm `json:"unqueued_gang_pods,omitempty"`
	// GangTimeRatio is Gangs.Seconds / UnqueuedGangPods.Seconds: how much
	// longer the gangs take to be all bound than as many plain pods.
	GangTimeRatio float64 `json:"gang_time_ratio_over_unqueued,omitempty"`
}

func newQueuedReport(s queuedSettings) *queuedReport {
	conditions := newThroughputReport(s.throughputSettings).Conditions
	conditions.ArmA, conditions.ArmAUnbatched, conditions.ArmB = "", "", ""
	conditions.Gpusched["policy"] = fmt.Sprintf("ClusterQueue %s with nominal quota 8 GPUs and 8 cpu a node "+
		"(room for every pod), reached by LocalQueue %s in the queued arms' namespaces", queuedQueue, queuedQueue)
	conditions.Gpusched["webhook"] = "registered in every arm (deploy/'s MutatingWebhookConfiguration, URL on loopback)"
	return &queuedReport{
		Benchmark: "queued_throughput", Conditions: conditions, Gangs: s.gangs, GangSize: s.gangSize,
		Arms: map[string]string{
			"unqueued": "deploy/kube-scheduler-config.yaml as shipped (gpusched filter, prioritize, preempt, bind); pods in no queue",
			"queued": "the same, pods labelled " + cluster.QueueLabel + "=" + queuedQueue +
				": gated by the webhook, admitted by gpusched's admission loop, then bound",
			"gangs": "the queued arm's conditions; pods are members of Kueue pod groups (pod-group-name + total-count), " +
				"each gang admitted whole",
			"unqueued_gang_pods": "the unqueued arm with as many pods as the gangs hold",
		},
	}
}

// runQueued starts one control plane for the node count, the queue in its
// policy, and runs the arms s.rounds times.
func runQueued(b *testing.B, s queuedSettings, report *queuedReport, nodes int) []queuedRun {
	dir := b.TempDir()
	policy := cluster.KueuePolicy{Queues: []cluster.ClusterQueue{{Name: queuedQueue, GPUs: 8 * nodes, CPUs: 8 * nodes,
		LocalQueues: []cluster.LocalQueue{
			{Namespace: tpArmNamespace(queuedArm.name), Name: queuedQueue},
			{Namespace: tpArmNamespace(queuedGangArm.name), Name: queuedQueue},
		}}}}
	path, err := policy.WriteFile(dir)
	if err != nil {
		b.Fatal(err)
	}
	cp, client, setup := startThroughputCluster(b, s.throughputSettings,
		controlplane.Options{Webhook: true, Policy: path}, report.Conditions.Versions, nodes)
	var runs []queuedRun
	for round := 1; round <= s.rounds; round++ {
		run := runQueuedRound(context.Background(), b, cp, client, s, report, nodes)
		run.Round, run.NodeSetupSeconds = round, setup
		runs = append(runs, run)
	}
	return runs
}

var (
	unqueuedArm   = tpArmSpec{name: "unqueued", withGpusched: true}
	queuedArm     = tpArmSpec{name: "queued", withGpusched: true, mark: inQueue}
	queuedGangArm = tpArmSpec{name: "gangs", withGpusched: true}
)

func inQueue(pod *corev1.Pod, _ int) {
	metav1.SetMetaDataLabel(&pod.ObjectMeta, cluster.QueueLabel, queuedQueue)
}

// gangMember makes pod i member i%size of gang i/size.
func gangMember(size int) func(*corev1.Pod, int) {
	return func(pod *corev1.Pod, i int) {
		group := fmt.Sprintf("gang-%03d", i/size)
		inQueue(pod, i)
		metav1.SetMetaDataLabel(&pod.ObjectMeta, "kueue.x-k8s.io/pod-group-name", group)
		metav1.SetMetaDataAnnotation(&pod.ObjectMeta, "kueue.x-k8s.io/pod-group-total-count", fmt.Sprint(size))
	}
}

func runQueuedRound(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, client kubernetes.Interface,
	s queuedSettings, report *queuedReport, nodes int) queuedRun {
	run := queuedRun{Nodes: nodes, Pods: s.pods}
	run.Unqueued = runThroughputArmWith(ctx, b, cp, client, s.throughputSettings, unqueuedArm, report.Arms["unqueued"])
	run.Queued = runThroughputArmWith(ctx, b, cp, client, s.throughputSettings, queuedArm, report.Arms["queued"])
	if run.Unqueued.PodsPerSecond > 0 {
		run.Ratio = run.Queued.PodsPerSecond / run.Unqueued.PodsPerSecond
	}
	b.Logf("nodes=%d: queued/unqueued = %.2f (%.1f / %.1f pods/s)",
		nodes, run.Ratio, run.Queued.PodsPerSecond, run.Unqueued.PodsPerSecond)
	if s.gangs == 0 {
		return run
	}
	members := s.gangs * s.gangSize
	gangs := queuedGangArm
	gangs.pods, gangs.mark = members, gangMember(s.gangSize)
	gangArm := runThroughputArmWith(ctx, b, cp, client, s.throughputSettings, gangs, report.Arms["gangs"])
	single := run.Unqueued
	if members != s.pods {
		plain := tpArmSpec{name: "unqueued_gang_pods", withGpusched: true, pods: members}
		single = runThroughputArmWith(ctx, b, cp, client, s.throughputSettings, plain, report.Arms["unqueued_gang_pods"])
	}
	run.Gangs, run.UnqueuedGangPods = &gangArm, &single
	if single.Seconds > 0 {
		run.GangTimeRatio = gangArm.Seconds / single.Seconds
	}
	b.Logf("nodes=%d: %d gangs of %d all bound %.2f s after the first create (%.2f s after the last), %.2f x %d unqueued pods' %.2f s",
		nodes, s.gangs, s.gangSize, gangArm.Seconds, gangArm.SecondsAfterLastCreate, run.GangTimeRatio, members, single.Seconds)
	return run
}
