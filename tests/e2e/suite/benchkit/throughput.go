// Package benchkit holds the end-to-end benchmarks that measure pods bound
// per second on the loopback control plane, and what they share with the
// other benchmarks: generated DGX H100 nodes, parallel creates, a watch
// that times binds, CPU times from /proc, a Prometheus text parser and
// JSON result files. The Benchmark* entries stay in package suite_test so
// that the e2e.test binary holds them. This file: the throughput
// benchmark, its settings and one run; cluster.go the nodes and pods,
// metrics.go what is measured around an arm, prom.go the /metrics parser,
// report.go the result file, queued.go the queued benchmark.
package benchkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// KubeSchedulerThroughput (BenchmarkKubeSchedulerThroughput) measures pods bound per second through
// the real kube-scheduler on a loopback control plane, per node count:
//
//	arm a: kube-scheduler without extenders (in-tree NodeResourcesFit counts
//	       nvidia.com/gpu);
//	arm b: kube-scheduler as deploy/ configures it, gpusched doing filter,
//	       prioritize, preempt and bind;
//	arm a_unbatched: arm a with OpportunisticBatching off.
//
// Why the third arm: since v1.35 kube-scheduler reuses one pod's scores for
// the next pod of the same signature (OpportunisticBatching, on by
// default), and it turns that off for every profile that has an extender
// (frameworkImpl.computeBatchablePlugins). Arm b can never batch, whatever
// the extender costs; arm a_unbatched is the same in-tree algorithm arm b
// runs, without the extender, so b/a_unbatched is what the extender itself
// costs and b/a what a user gives up by registering any extender.
//
// Both arms run on the same apiserver, etcd, gpusched and nodes, one after
// the other, each with a kube-scheduler process of its own (so CPU time and
// /metrics are per arm); arm a's pods are deleted before arm b. No kubelet:
// bound pods stay Pending with spec.nodeName set.
//
// Sized by E2E_BENCH_NODES (comma-separated, default 50) and E2E_BENCH_PODS
// (default 40); E2E_BENCH_OUT names a JSON result file. Run it once:
//
//	e2e.test -test.run '^$' -test.bench '^BenchmarkKubeSchedulerThroughput$' -test.benchtime 1x
func KubeSchedulerThroughput(b *testing.B) {
	settings := throughputSettingsFromEnv(b)
	report := newThroughputReport(settings)
	report.Runs = tpPerNodeCount(b, settings.nodeCounts, "median-b/a",
		func(b *testing.B, nodes int) []throughputRun { return runThroughput(b, settings, report, nodes) },
		func(run throughputRun) float64 { return run.Ratio })
	finishThroughputReport(b, settings.out, &report.Conditions, report)
}

// finishThroughputReport records the machine after the runs and writes the
// report to out, if named.
func finishThroughputReport(b *testing.B, out string, conditions *throughputCondition, report any) {
	conditions.MachineAfter = Machine()
	if out != "" {
		WriteJSONReport(b, out, report)
	}
}

// tpPerNodeCount runs one sub-benchmark per node count, each returning its
// rounds, reports the median of ratio over them as metric, and returns
// every round.
func tpPerNodeCount[R any](b *testing.B, nodeCounts []int, metric string,
	run func(b *testing.B, nodes int) []R, ratio func(R) float64) []R {
	var all []R
	for _, nodes := range nodeCounts {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			runs := run(b, nodes)
			all = append(all, runs...)
			ratios := make([]float64, len(runs))
			for i, r := range runs {
				ratios[i] = ratio(r)
			}
			b.ReportMetric(tpMedian(ratios), metric)
		})
	}
	return all
}

// The client limits of every Go client in the measurement, raised so that
// client-side throttling is not what is measured (kube-scheduler's defaults
// are qps 50, burst 100: it would bind at most 50 pods/s).
const (
	throughputQPS   = 5000
	throughputBurst = 10000
	// tpSettle is the pause between creating the nodes and the first arm.
	tpSettle = 10 * time.Second
	// throughputTarget is the b/a ratio the benchmark is held to.
	throughputTarget = 0.9
	// tpClockTicks is USER_HZ, the unit of /proc/<pid>/stat's utime and
	// stime: 100 on every Linux architecture Go supports.
	tpClockTicks = 100
)

// throughputAPIServerArgs raise kube-apiserver's in-flight limits (defaults
// 400 and 200). With API Priority and Fairness on, their sum is the server's
// concurrency, shared by priority level: kube-scheduler (a ServiceAccount)
// lands in workload-low, gpusched (a plain user) in global-default, the
// benchmark's client (system:masters) in exempt.
var throughputAPIServerArgs = []string{
	"--max-requests-inflight=3000",
	"--max-mutating-requests-inflight=1000",
}

type throughputSettings struct {
	nodeCounts      []int
	rounds          int
	pods            int
	createWorkers   int
	gpuschedThreads int // 0: gpusched's default
	out             string
}

func throughputSettingsFromEnv(b *testing.B) throughputSettings {
	b.Helper()
	s := throughputSettings{
		nodeCounts:      EnvInts(b, "E2E_BENCH_NODES", []int{50}),
		rounds:          EnvInts(b, "E2E_BENCH_ROUNDS", []int{1})[0],
		pods:            EnvInts(b, "E2E_BENCH_PODS", []int{40})[0],
		createWorkers:   EnvInts(b, "E2E_BENCH_CREATE_WORKERS", []int{32})[0],
		gpuschedThreads: EnvInts(b, "E2E_BENCH_GPUSCHED_THREADS", []int{0})[0],
		out:             os.Getenv("E2E_BENCH_OUT"),
	}
	for _, n := range s.nodeCounts {
		// 8 GPUs a node: the pods must fit, or arm a measures failures.
		if n <= 0 || s.pods <= 0 || s.pods > 8*n || s.rounds <= 0 {
			b.Fatalf("E2E_BENCH_NODES=%v, E2E_BENCH_PODS=%d, E2E_BENCH_ROUNDS=%d: want positive sizes with pods <= 8 x nodes",
				s.nodeCounts, s.pods, s.rounds)
		}
	}
	return s
}

// EnvInts parses a comma-separated list of integers, or returns def.
func EnvInts(b *testing.B, name string, def []int) []int {
	b.Helper()
	text := strings.TrimSpace(os.Getenv(name))
	if text == "" {
		return def
	}
	var out []int
	for _, field := range strings.Split(text, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil {
			b.Fatalf("%s=%q: %v", name, text, err)
		}
		out = append(out, n)
	}
	return out
}

// ---- one node count ----

// runThroughput sets up `nodes` nodes once, then runs the three arms
// s.rounds times over: on a shared 2-core machine one round's ratio moves
// by a tenth or more from run to run, so the verdict is on the median.
func runThroughput(b *testing.B, s throughputSettings, report *throughputReport, nodes int) []throughputRun {
	cp, client, setup := startThroughputCluster(b, s, controlplane.Options{}, report.Conditions.Versions, nodes)
	ctx := context.Background()
	var runs []throughputRun
	for round := 1; round <= s.rounds; round++ {
		run := runThroughputRound(ctx, b, cp, client, s, report, nodes)
		run.Round, run.NodeSetupSeconds = round, setup
		runs = append(runs, run)
	}
	return runs
}

// startThroughputCluster starts the benchmark's control plane (opts plus
// the benchmark's flags; no kube-scheduler, each arm starts its own; no
// kubelet), records the components' versions once, creates `nodes` nodes
// and waits until gpusched's model holds them and the servers settled. It
// returns the plane, the benchmark's client and the node set-up seconds.
func startThroughputCluster(b *testing.B, s throughputSettings, opts controlplane.Options, versions map[string]string,
	nodes int) (*controlplane.ControlPlane, kubernetes.Interface, float64) {
	b.Helper()
	opts.Run = &controlplane.Components{Gpusched: true} // each arm starts its own kube-scheduler; no kubelet
	opts.APIServerArgs, opts.GpuschedArgs = throughputAPIServerArgs, throughputGpuschedArgs(s)
	cp := controlplane.Start(b, opts)
	if _, known := versions["kube_apiserver"]; !known {
		throughputVersions(cp, versions)
	}
	ctx := context.Background()
	client := Client(b, cp)
	began := time.Now()
	CreateNodes(ctx, b, cp, client, nodes, s.createWorkers)
	cluster.WaitGpuschedNodes(ctx, b, cp, nodes, 2*time.Minute)
	setup := time.Since(began).Seconds()
	b.Logf("%d nodes created and in gpusched's model in %.1f s", nodes, setup)
	// The API server and etcd are still busy with the node creations for a
	// few seconds (watch fan-out, GC): let that settle, so that the first
	// arm does not pay for it.
	time.Sleep(tpSettle)
	return cp, client, setup
}

// runThroughputRound runs arms a, a_unbatched and b one after the other.
func runThroughputRound(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, client kubernetes.Interface,
	s throughputSettings, report *throughputReport, nodes int) throughputRun {
	run := throughputRun{Nodes: nodes, Pods: s.pods}
	run.A = runThroughputArmWith(ctx, b, cp, client, s, tpArmA, report.Conditions.ArmA)
	run.AUnbatched = runThroughputArmWith(ctx, b, cp, client, s, tpArmAUnbatched, report.Conditions.ArmAUnbatched)
	run.B = runThroughputArmWith(ctx, b, cp, client, s, tpArmB, report.Conditions.ArmB)
	if run.A.PodsPerSecond > 0 {
		run.Ratio = run.B.PodsPerSecond / run.A.PodsPerSecond
	}
	if run.AUnbatched.PodsPerSecond > 0 {
		run.RatioUnbatched = run.B.PodsPerSecond / run.AUnbatched.PodsPerSecond
	}
	b.Logf("nodes=%d: b/a = %.2f (target >= %.1f), b/a_unbatched = %.2f",
		nodes, run.Ratio, throughputTarget, run.RatioUnbatched)
	return run
}

// tpArmSpec is what sets an arm apart: its name (also its namespace's
// suffix), whether kube-scheduler calls gpusched, extra flags, and which
// pods it creates.
type tpArmSpec struct {
	name         string
	withGpusched bool
	args         []string
	// pods replaces the settings' pod count (0 keeps it).
	pods int
	// mark changes pod i before its creation (a queue's label, a gang's);
	// nil creates the plain single-GPU pods.
	mark func(pod *corev1.Pod, i int)
}

// podCount is how many pods the arm creates.
func (spec tpArmSpec) podCount(s throughputSettings) int {
	if spec.pods > 0 {
		return spec.pods
	}
	return s.pods
}

// tpNoBatching is the flag arm a_unbatched runs kube-scheduler with.
const tpNoBatching = "--feature-gates=OpportunisticBatching=false"

var (
	tpArmA          = tpArmSpec{name: "a"}
	tpArmAUnbatched = tpArmSpec{name: "a_unbatched", args: []string{tpNoBatching}}
	tpArmB          = tpArmSpec{name: "b", withGpusched: true}
)

// runThroughputArmWith runs arm "a" (no extender) or "b" (gpusched) with a
// kube-scheduler of its own, checks that the arm is what it claims to be,
// and deletes its pods so that the next arm starts on empty nodes, in
// gpusched's model too.
func runThroughputArmWith(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, client kubernetes.Interface,
	s throughputSettings, spec tpArmSpec, description string) throughputArm {
	b.Helper()
	name, withGpusched := spec.name, spec.withGpusched
	namespace := tpArmNamespace(name)
	if err := controlplane.EnsureNamespace(ctx, client, namespace); err != nil {
		b.Fatal(err)
	}
	sched := cp.StartBenchScheduler(controlplane.BenchSchedulerOptions{
		Name: name, Extender: withGpusched, QPS: throughputQPS, Burst: throughputBurst, Args: spec.args,
	})
	arm := runThroughputArm(ctx, b, cp, client, sched, namespace, s, spec)
	arm.Description = description
	sched.Stop()
	logThroughputArm(b, name, &arm)
	if hinted := arm.BatchAttempts["hint_used"]; withGpusched || len(spec.args) > 0 {
		if hinted > 0 {
			b.Errorf("arm %s: kube-scheduler used %v batching hints where it should not batch", name, hinted)
		}
	} else if hinted == 0 {
		// A finding, not a failure: the comparison assumes it may batch.
		b.Logf("arm %s: kube-scheduler never used a batching hint: %v", name, arm.BatchAttempts)
	}
	switch {
	case withGpusched && arm.PodsWithGpuIDs != arm.Bound:
		b.Errorf("arm %s: %d of %d bound pods carry %s: gpusched did not bind them all", name, arm.PodsWithGpuIDs, arm.Bound, cluster.GpuIDsAnnotation)
	case !withGpusched && len(arm.GpuschedVerbs) > 0:
		b.Errorf("arm %s: kube-scheduler without extenders called gpusched: %v", name, arm.GpuschedVerbs)
	}
	DeletePods(ctx, b, cp, client, namespace)
	return arm
}

// tpArmNamespace is the namespace an arm creates its pods in.
func tpArmNamespace(arm string) string {
	return "bench-" + strings.ReplaceAll(arm, "_", "-")
}

// Client is the admin's client with the benchmark's limits
// (the fixture's is 500 qps).
func Client(b *testing.B, cp *controlplane.ControlPlane) kubernetes.Interface {
	b.Helper()
	config := rest.CopyConfig(cp.RestConfig)
	config.QPS, config.Burst = throughputQPS, throughputBurst
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		b.Fatal(err)
	}
	return client
}

func throughputVersions(cp *controlplane.ControlPlane, v map[string]string) {
	if info, err := cp.Client.Discovery().ServerVersion(); err == nil {
		v["kube_apiserver"] = info.GitVersion
	}
	firstLine := func(path string, args ...string) string {
		out, err := exec.Command(path, args...).Output()
		if err != nil {
			return fmt.Sprintf("(%v)", err)
		}
		return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
	v["kube_scheduler"] = firstLine(cp.Bins.KubeScheduler, "--version")
	v["etcd"] = firstLine(cp.Bins.Etcd, "--version")
	v["gpusched_bin"] = cp.Bins.Gpusched
	if info, err := os.Stat(cp.Bins.Gpusched); err == nil {
		v["gpusched_bin_modified"] = info.ModTime().UTC().Format(time.RFC3339)
	}
	v["gpusched_repo_head"] = firstLine("git", "-C", cp.Repo, "rev-parse", "--short", "HEAD")
}

func logThroughputArm(b *testing.B, name string, a *throughputArm) {
	b.Helper()
	var cpu []string
	for _, component := range cluster.SortedKeys(a.CPUSecondsPerPod) {
		cpu = append(cpu, fmt.Sprintf("%s %.2f", component, 1000*a.CPUSecondsPerPod[component]))
	}
	b.Logf("arm %s: %d/%d pods bound in %.2f s = %.1f pods/s (creates took %.2f s; bind window %.1f pods/s); "+
		"attempt p50 %.1f ms p99 %.1f ms; algorithm mean %.2f ms p99 %.1f ms; CPU ms/pod: %s; gpu-ids on %d pods; batch attempts %v",
		name, a.Bound, a.Pods, a.Seconds, a.PodsPerSecond, a.CreateSeconds, a.BindWindowPodsPerSecond,
		a.AttemptDuration.P50, a.AttemptDuration.P99, a.AlgorithmDuration.Mean, a.AlgorithmDuration.P99,
		strings.Join(cpu, ", "), a.PodsWithGpuIDs, a.BatchAttempts)
	for _, verb := range cluster.SortedKeys(a.GpuschedVerbs) {
		v := a.GpuschedVerbs[verb]
		b.Logf("arm %s: gpusched %s: %.0f calls (%.0f errors), server mean %.0f µs p50 %.0f µs p99 %.0f µs",
			name, verb, v.Count, v.Errors, v.MeanUs, v.P50Us, v.P99Us)
	}
	if len(a.GpuschedVerbs) > 0 {
		b.Logf("arm %s: gpusched server threads busy on average: %.2f", name, a.GpuschedBusyServerThreads)
	}
}

// tpMedian is the middle value (the mean of the middle two for an even
// count); 0 for none.
func tpMedian(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	mid := len(sorted) / 2
	if len(sorted)%2 == 0 {
		return (sorted[mid-1] + sorted[mid]) / 2
	}
	return sorted[mid]
}

// ---- one arm ----

func runThroughputArm(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, client kubernetes.Interface,
	sched *controlplane.BenchScheduler, namespace string, s throughputSettings, spec tpArmSpec) throughputArm {
	b.Helper()
	pods := spec.podCount(s)
	// Generous: 2,000 pods at under 7 pods/s would be a finding in itself.
	timeout := max(time.Minute, time.Duration(pods)*150*time.Millisecond)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	before := tpSnapshotBefore(ctx, b, cp, sched)
	rec := &tpBindRecorder{want: pods, bound: map[string]time.Time{}}
	creation := createThroughputPods(ctx, client, namespace, pods, s.createWorkers, spec.mark)
	check := func() error {
		if err := creation.failed(); err != nil {
			return err
		}
		return sched.Exited()
	}
	watchErr := tpWatchBinds(ctx, client, namespace, list.ResourceVersion, rec, check)
	after := tpSnapshotAfter(ctx, b, cp, sched)
	<-creation.done
	arm := tpArmFromSnapshots(before, after, pods)
	arm.Pods, arm.Bound, arm.Complete = pods, len(rec.bound), watchErr == nil
	tpFillArmTimes(&arm, before.at, creation.finished, rec)
	arm.PodsWithGpuIDs = tpCountGpuIDs(ctx, b, client, namespace)
	if watchErr != nil {
		b.Errorf("arm in %s: %d of %d pods bound: %v", namespace, len(rec.bound), pods, watchErr)
	}
	return arm
}

func tpFillArmTimes(arm *throughputArm, start, created time.Time, rec *tpBindRecorder) {
	if created.After(start) {
		arm.CreateSeconds = created.Sub(start).Seconds()
		arm.CreatePodsPerSecond = float64(arm.Pods) / arm.CreateSeconds
	}
	if rec.first.IsZero() {
		return
	}
	arm.FirstBoundSeconds = rec.first.Sub(start).Seconds()
	arm.Seconds = rec.last.Sub(start).Seconds()
	arm.SecondsAfterLastCreate = rec.last.Sub(created).Seconds()
	if arm.Seconds > 0 {
		arm.PodsPerSecond = float64(arm.Bound) / arm.Seconds
	}
	if window := rec.last.Sub(rec.first).Seconds(); window > 0 {
		arm.BindWindowPodsPerSecond = float64(arm.Bound-1) / window
	}
}
