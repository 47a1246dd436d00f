package suite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// This file shares package suite_test with the tests beside it: its helpers
// carry a "throughput" or "tp" prefix so that names cannot clash.

// BenchmarkKubeSchedulerThroughput measures pods bound per second through
// the real kube-scheduler on a loopback control plane, per node count:
//
//	arm a: kube-scheduler without extenders (in-tree NodeResourcesFit counts
//	       nvidia.com/gpu);
//	arm b: kube-scheduler as deploy/ configures it, gpusched doing filter,
//	       prioritize, preempt and bind.
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
func BenchmarkKubeSchedulerThroughput(b *testing.B) {
	settings := throughputSettingsFromEnv(b)
	report := newThroughputReport(settings)
	for _, nodes := range settings.nodeCounts {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			run := runThroughput(b, settings, report, nodes)
			report.Runs = append(report.Runs, run)
			b.ReportMetric(run.A.PodsPerSecond, "a-pods/s")
			b.ReportMetric(run.B.PodsPerSecond, "b-pods/s")
			b.ReportMetric(run.Ratio, "b/a")
		})
	}
	report.Conditions.MachineAfter = throughputMachine()
	if settings.out != "" {
		writeThroughputReport(b, settings.out, report)
	}
}

// The client limits of every Go client in the measurement, raised so that
// client-side throttling is not what is measured (kube-scheduler's defaults
// are qps 50, burst 100: it would bind at most 50 pods/s).
const (
	throughputQPS   = 5000
	throughputBurst = 10000
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
	pods            int
	createWorkers   int
	gpuschedThreads int // 0: gpusched's default
	out             string
}

func throughputSettingsFromEnv(b *testing.B) throughputSettings {
	b.Helper()
	s := throughputSettings{
		nodeCounts:      tpEnvInts(b, "E2E_BENCH_NODES", []int{50}),
		pods:            tpEnvInts(b, "E2E_BENCH_PODS", []int{40})[0],
		createWorkers:   tpEnvInts(b, "E2E_BENCH_CREATE_WORKERS", []int{32})[0],
		gpuschedThreads: tpEnvInts(b, "E2E_BENCH_GPUSCHED_THREADS", []int{0})[0],
		out:             os.Getenv("E2E_BENCH_OUT"),
	}
	for _, n := range s.nodeCounts {
		// 8 GPUs a node: the pods must fit, or arm a measures failures.
		if n <= 0 || s.pods <= 0 || s.pods > 8*n {
			b.Fatalf("E2E_BENCH_NODES=%v, E2E_BENCH_PODS=%d: want positive sizes with pods <= 8 x nodes", s.nodeCounts, s.pods)
		}
	}
	return s
}

// tpEnvInts parses a comma-separated list of integers, or returns def.
func tpEnvInts(b *testing.B, name string, def []int) []int {
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

// ---- the result file ----

type throughputReport struct {
	Benchmark   string              `json:"benchmark"`
	Conditions  throughputCondition `json:"conditions"`
	TargetRatio float64             `json:"target_ratio"`
	Runs        []throughputRun     `json:"runs"`
}

type throughputCondition struct {
	MachineBefore    map[string]any    `json:"machine_before"`
	MachineAfter     map[string]any    `json:"machine_after"`
	Versions         map[string]string `json:"versions"`
	Pods             int               `json:"pods"`
	NodeCounts       []int             `json:"node_counts"`
	NodeShape        string            `json:"node_shape"`
	PodShape         string            `json:"pod_shape"`
	Kubelet          string            `json:"kubelet"`
	ArmA             string            `json:"arm_a"`
	ArmB             string            `json:"arm_b"`
	KubeScheduler    map[string]any    `json:"kube_scheduler"`
	APIServerArgs    []string          `json:"apiserver_args"`
	Client           map[string]any    `json:"client"`
	Gpusched         map[string]any    `json:"gpusched"`
	Measure          string            `json:"measure"`
	QuantileEstimate string            `json:"quantile_estimate"`
}

type throughputRun struct {
	Nodes            int           `json:"nodes"`
	Pods             int           `json:"pods"`
	NodeSetupSeconds float64       `json:"node_setup_seconds"`
	A                throughputArm `json:"a"`
	B                throughputArm `json:"b"`
	// Ratio is B.PodsPerSecond / A.PodsPerSecond.
	Ratio float64 `json:"ratio_b_over_a"`
}

type throughputArm struct {
	Description string `json:"description"`
	Pods        int    `json:"pods"`
	Bound       int    `json:"bound"`
	Complete    bool   `json:"complete"`
	// Seconds run from the first pod create to the last bind seen; the
	// other times are relative to the same start.
	Seconds                 float64            `json:"seconds"`
	CreateSeconds           float64            `json:"create_seconds"`
	FirstBoundSeconds       float64            `json:"first_bound_seconds"`
	PodsPerSecond           float64            `json:"pods_per_second"`
	BindWindowPodsPerSecond float64            `json:"bind_window_pods_per_second"`
	SecondsAfterLastCreate  float64            `json:"seconds_after_last_create"`
	CreatePodsPerSecond     float64            `json:"create_pods_per_second"`
	PodsWithGpuIDs          int                `json:"pods_with_gpu_ids"`
	CPUSeconds              map[string]float64 `json:"cpu_seconds"`
	CPUSecondsPerPod        map[string]float64 `json:"cpu_seconds_per_pod"`
	AttemptDuration         tpHistogramSummary `json:"scheduling_attempt_duration_ms"`
	AlgorithmDuration       tpHistogramSummary `json:"scheduling_algorithm_duration_ms"`
	ScheduleAttempts        map[string]float64 `json:"schedule_attempts"`
	SchedulerRateLimitWaitS float64            `json:"scheduler_client_rate_limiter_wait_seconds"`
	APIServerRejected       float64            `json:"apiserver_flowcontrol_rejected_requests"`
	// APIServerRequests counts requests by "VERB resource[/subresource]"
	// (non-2xx codes apart): what each arm asks of the apiserver.
	APIServerRequests    map[string]float64 `json:"apiserver_requests"`
	APIServerWatchEvents float64            `json:"apiserver_watch_events"`
	APIServerWatchBytes  float64            `json:"apiserver_watch_event_bytes"`
	// APIServerTerminatedWatchers counts watches the apiserver closed
	// because the client read too slowly (it then re-watches): a sign of a
	// CPU-starved machine during the burst.
	APIServerTerminatedWatchers float64                  `json:"apiserver_terminated_watchers"`
	GpuschedVerbs               map[string]tpVerbSummary `json:"gpusched_verbs"`
	GpuschedBusyServerThreads   float64                  `json:"gpusched_busy_server_threads"`
}

type tpHistogramSummary struct {
	Count float64 `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
}

type tpVerbSummary struct {
	Count  float64 `json:"count"`
	Errors float64 `json:"errors"`
	MeanUs float64 `json:"mean_us"`
	P50Us  float64 `json:"p50_us"`
	P99Us  float64 `json:"p99_us"`
}

func newThroughputReport(s throughputSettings) *throughputReport {
	gpusched := map[string]any{
		"args":              throughputGpuschedArgs(s),
		"threads":           "gpusched's default (2)",
		"client_rate_limit": "none: gpusched's API client has no client-side rate limiter",
		"policy":            "none (every pod admitted; deploy/ mounts a policy ConfigMap)",
	}
	if s.gpuschedThreads > 0 {
		gpusched["threads"] = s.gpuschedThreads
	}
	return &throughputReport{
		Benchmark:   "kube_scheduler_throughput",
		TargetRatio: throughputTarget,
		Conditions: throughputCondition{
			MachineBefore: throughputMachine(),
			Versions:      map[string]string{"go_client": runtime.Version()},
			Pods:          s.pods,
			NodeCounts:    s.nodeCounts,
			NodeShape: "copies of deploy/examples/demo-cluster.yaml's dgx-h100-2: 8x NVIDIA-H100-80GB-HBM3 " +
				"with its GFD labels, 224 cpu, ~2 TiB memory, 110 pods allocatable, Ready; 4 nodes a rack, 32 a block",
			PodShape: "1 nvidia.com/gpu (request = limit) + 100m cpu, pause image, schedulerName gpusched",
			Kubelet:  "none (controlplane.Options.NoKubelet): bound pods stay Pending with spec.nodeName set",
			ArmA:     "deploy/kube-scheduler-config.yaml without extenders: in-tree plugins only (NodeResourcesFit counts nvidia.com/gpu)",
			ArmB:     "deploy/kube-scheduler-config.yaml as shipped: gpusched filter, prioritize, preempt, bind (nodeCacheCapable)",
			KubeScheduler: map[string]any{
				"qps": throughputQPS, "burst": throughputBurst, "v": 2,
				"percentage_of_nodes_to_score": "unset (adaptive), as in deploy/",
				"process":                      "a fresh kube-scheduler per arm, only one running at a time",
			},
			APIServerArgs: throughputAPIServerArgs,
			Client: map[string]any{
				"qps": throughputQPS, "burst": throughputBurst, "create_workers": s.createWorkers,
				"identity": "system:masters (API Priority and Fairness: exempt)",
			},
			Gpusched: gpusched,
			Measure: "per arm: all pods created by create_workers goroutines while the arm's kube-scheduler runs; " +
				"seconds = first create sent -> last pod seen bound by a watch; pods_per_second = pods / seconds; " +
				"CPU = utime+stime deltas of /proc/<pid>/stat over that window (bench_client is this test process: " +
				"creates and the watch); histograms are /metrics differenced over the same window",
			QuantileEstimate: "linear interpolation inside the histogram bucket, as Prometheus histogram_quantile",
		},
	}
}

func throughputGpuschedArgs(s throughputSettings) []string {
	// deploy/'s Deployment runs gpusched at verbosity 0 with JSON logs; the
	// fixture's -v 1 would add a debug line per filter call.
	args := []string{"-v", "0", "--log-format", "json", "--bind-deadline-ms", "3000"}
	if s.gpuschedThreads > 0 {
		args = append(args, "--threads", strconv.Itoa(s.gpuschedThreads))
	}
	return args
}

// throughputMachine is what the other bench/results files record: cores,
// kernel and the load average (the machine is shared).
func throughputMachine() map[string]any {
	m := map[string]any{"cores": runtime.NumCPU()}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m["kernel"] = strings.TrimSpace(string(data))
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		fields := strings.Fields(string(data))
		if len(fields) >= 2 {
			m["loadavg_1m"], _ = strconv.ParseFloat(fields[0], 64)
			m["loadavg_5m"], _ = strconv.ParseFloat(fields[1], 64)
		}
	}
	return m
}

func writeThroughputReport(b *testing.B, path string, report *throughputReport) {
	b.Helper()
	var data strings.Builder
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(false) // keep "->" and "<pid>" readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(report); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("wrote %s", path)
}

// ---- one node count ----

func runThroughput(b *testing.B, s throughputSettings, report *throughputReport, nodes int) throughputRun {
	cp := controlplane.Start(b, controlplane.Options{
		NoScheduler:   true, // each arm starts its own
		NoKubelet:     true,
		APIServerArgs: throughputAPIServerArgs,
		GpuschedArgs:  throughputGpuschedArgs(s),
	})
	if _, known := report.Conditions.Versions["kube_apiserver"]; !known {
		throughputVersions(cp, report.Conditions.Versions)
	}
	ctx := context.Background()
	client := throughputClient(b, cp)
	run := throughputRun{Nodes: nodes, Pods: s.pods}
	began := time.Now()
	createThroughputNodes(ctx, b, cp, client, nodes, s.createWorkers)
	tpWaitGpuschedNodes(ctx, b, cp, nodes)
	run.NodeSetupSeconds = time.Since(began).Seconds()
	b.Logf("%d nodes created and in gpusched's model in %.1f s", nodes, run.NodeSetupSeconds)

	run.A = runThroughputArmWith(ctx, b, cp, client, s, "a", report.Conditions.ArmA)
	run.B = runThroughputArmWith(ctx, b, cp, client, s, "b", report.Conditions.ArmB)
	if run.A.PodsPerSecond > 0 {
		run.Ratio = run.B.PodsPerSecond / run.A.PodsPerSecond
	}
	b.Logf("nodes=%d: b/a = %.2f (target >= %.1f)", nodes, run.Ratio, throughputTarget)
	return run
}

// runThroughputArmWith runs arm "a" (no extender) or "b" (gpusched) with a
// kube-scheduler of its own, checks that the arm is what it claims to be,
// and deletes its pods so that the next arm starts on empty nodes, in
// gpusched's model too.
func runThroughputArmWith(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, client kubernetes.Interface,
	s throughputSettings, name, description string) throughputArm {
	b.Helper()
	namespace := "bench-" + name
	if err := controlplane.EnsureNamespace(ctx, client, namespace); err != nil {
		b.Fatal(err)
	}
	withGpusched := name == "b"
	sched := cp.StartBenchScheduler(controlplane.BenchSchedulerOptions{
		Name: name, NoExtender: !withGpusched, QPS: throughputQPS, Burst: throughputBurst,
	})
	arm := runThroughputArm(ctx, b, cp, client, sched, namespace, s)
	arm.Description = description
	sched.Stop()
	logThroughputArm(b, name, &arm)
	switch {
	case withGpusched && arm.PodsWithGpuIDs != arm.Bound:
		b.Errorf("arm %s: %d of %d bound pods carry %s: gpusched did not bind them all", name, arm.PodsWithGpuIDs, arm.Bound, cluster.GpuIDsAnnotation)
	case !withGpusched && len(arm.GpuschedVerbs) > 0:
		b.Errorf("arm %s: kube-scheduler without extenders called gpusched: %v", name, arm.GpuschedVerbs)
	}
	deleteThroughputPods(ctx, b, cp, client, namespace)
	return arm
}

// throughputClient is the admin's client with the benchmark's limits
// (the fixture's is 500 qps).
func throughputClient(b *testing.B, cp *controlplane.ControlPlane) kubernetes.Interface {
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
	for _, component := range tpSortedKeys(a.CPUSecondsPerPod) {
		cpu = append(cpu, fmt.Sprintf("%s %.2f", component, 1000*a.CPUSecondsPerPod[component]))
	}
	b.Logf("arm %s: %d/%d pods bound in %.2f s = %.1f pods/s (creates took %.2f s; bind window %.1f pods/s); "+
		"attempt p50 %.1f ms p99 %.1f ms; algorithm mean %.2f ms p99 %.1f ms; CPU ms/pod: %s; gpu-ids on %d pods",
		name, a.Bound, a.Pods, a.Seconds, a.PodsPerSecond, a.CreateSeconds, a.BindWindowPodsPerSecond,
		a.AttemptDuration.P50, a.AttemptDuration.P99, a.AlgorithmDuration.Mean, a.AlgorithmDuration.P99,
		strings.Join(cpu, ", "), a.PodsWithGpuIDs)
	for _, verb := range tpSortedKeys(a.GpuschedVerbs) {
		v := a.GpuschedVerbs[verb]
		b.Logf("arm %s: gpusched %s: %.0f calls (%.0f errors), server mean %.0f µs p50 %.0f µs p99 %.0f µs",
			name, verb, v.Count, v.Errors, v.MeanUs, v.P50Us, v.P99Us)
	}
	if len(a.GpuschedVerbs) > 0 {
		b.Logf("arm %s: gpusched server threads busy on average: %.2f", name, a.GpuschedBusyServerThreads)
	}
}

func tpSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ---- nodes ----

// createThroughputNodes registers n copies of the demo DGX H100 node, as
// a kubelet would (object, then status), from parallel workers.
func createThroughputNodes(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, client kubernetes.Interface, n, workers int) {
	b.Helper()
	template := throughputNodeTemplate(b, cp.Repo)
	err := tpParallel(n, workers, func(i int) error {
		node := throughputNode(template, i)
		_, err := cluster.CreateNode(ctx, client, &node)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}

// throughputNodeTemplate is dgx-h100-2: a DGX H100 whose topology is
// gpusched's documented default, so no large annotation is copied.
func throughputNodeTemplate(b *testing.B, repo string) *corev1.Node {
	b.Helper()
	nodes, err := cluster.DemoNodes(repo)
	if err != nil {
		b.Fatal(err)
	}
	for i := range nodes {
		if nodes[i].Name == "dgx-h100-2" {
			return &nodes[i]
		}
	}
	b.Fatalf("%s has no node dgx-h100-2", cluster.DemoClusterFile)
	return nil
}

func throughputNode(template *corev1.Node, i int) corev1.Node {
	node := *template.DeepCopy()
	node.Name = fmt.Sprintf("bench-h100-%05d", i)
	node.Labels["kubernetes.io/hostname"] = node.Name
	// A DGX SuperPOD rack holds 4 DGX nodes; a scalable unit 32.
	node.Labels["gpusched.io/rack"] = fmt.Sprintf("rack-%d", i/4)
	node.Labels["gpusched.io/block"] = fmt.Sprintf("block-%d", i/32)
	node.Spec.PodCIDR = fmt.Sprintf("10.%d.%d.0/24", 64+i/256, i%256)
	node.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.20.%d.%d", i/250, 1+i%250)},
		{Type: corev1.NodeHostName, Address: node.Name},
	}
	return node
}

// tpParallel runs do(0..n-1) on workers goroutines and returns the first
// error (the others still finish).
func tpParallel(n, workers int, do func(int) error) error {
	next := make(chan int)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := do(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// tpWaitGpuschedNodes waits until gpusched's model holds every node: arm b
// must not start while gpusched still follows the node watch.
func tpWaitGpuschedNodes(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, n int) {
	b.Helper()
	var last float64
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		text, err := cp.GpuschedMetrics()
		if err != nil {
			return false, nil
		}
		last = tpParseProm(text).sum("gpusched_nodes", nil)
		return int(last) >= n, nil
	})
	if err != nil {
		b.Fatalf("gpusched_nodes = %v, want %d: %v", last, n, err)
	}
}

// ---- one arm ----

func runThroughputArm(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, client kubernetes.Interface,
	sched *controlplane.BenchScheduler, namespace string, s throughputSettings) throughputArm {
	b.Helper()
	// Generous: 2,000 pods at under 7 pods/s would be a finding in itself.
	timeout := max(time.Minute, time.Duration(s.pods)*150*time.Millisecond)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	before := tpSnapshotBefore(ctx, b, cp, sched)
	rec := &tpBindRecorder{want: s.pods, bound: map[string]time.Time{}}
	creation := createThroughputPods(ctx, client, namespace, s.pods, s.createWorkers)
	check := func() error {
		if err := creation.failed(); err != nil {
			return err
		}
		return sched.Exited()
	}
	watchErr := tpWatchBinds(ctx, client, namespace, list.ResourceVersion, rec, check)
	after := tpSnapshotAfter(ctx, b, cp, sched)
	<-creation.done
	arm := tpArmFromSnapshots(before, after, s.pods)
	arm.Pods, arm.Bound, arm.Complete = s.pods, len(rec.bound), watchErr == nil
	tpFillArmTimes(&arm, before.at, creation.finished, rec)
	arm.PodsWithGpuIDs = tpCountGpuIDs(ctx, b, client, namespace)
	if watchErr != nil {
		b.Errorf("arm in %s: %d of %d pods bound: %v", namespace, len(rec.bound), s.pods, watchErr)
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

// tpPodCreation runs in the background; done closes when every create
// returned.
type tpPodCreation struct {
	done     chan struct{}
	mu       sync.Mutex
	err      error
	finished time.Time
}

func (c *tpPodCreation) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func createThroughputPods(ctx context.Context, client kubernetes.Interface, namespace string, n, workers int) *tpPodCreation {
	c := &tpPodCreation{done: make(chan struct{})}
	template := cluster.NewPod(namespace, "").SchedulerName(cluster.SchedulerName).Gpus(1).Build()
	go func() {
		defer close(c.done)
		err := tpParallel(n, workers, func(i int) error {
			pod := template.DeepCopy()
			pod.Name = fmt.Sprintf("pod-%05d", i)
			_, err := client.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
			return err
		})
		c.mu.Lock()
		c.err, c.finished = err, time.Now()
		c.mu.Unlock()
	}()
	return c
}

// tpBindRecorder keeps when each pod was first seen with a node.
type tpBindRecorder struct {
	want        int
	bound       map[string]time.Time
	first, last time.Time
}

func (r *tpBindRecorder) observe(pod *corev1.Pod, at time.Time) {
	if pod.Spec.NodeName == "" {
		return
	}
	if _, seen := r.bound[pod.Name]; seen {
		return
	}
	r.bound[pod.Name] = at
	if r.first.IsZero() {
		r.first = at
	}
	r.last = at
}

func (r *tpBindRecorder) done() bool { return len(r.bound) >= r.want }

// tpWatchBinds watches the namespace from resourceVersion until every pod is
// bound, re-watching if the server ends the stream; check is called every
// half second and aborts the wait with its error.
func tpWatchBinds(ctx context.Context, client kubernetes.Interface, namespace, resourceVersion string,
	rec *tpBindRecorder, check func() error) error {
	for !rec.done() {
		w, err := client.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{
			ResourceVersion: resourceVersion, AllowWatchBookmarks: true,
		})
		if err != nil {
			return err
		}
		resourceVersion, err = tpDrainWatch(ctx, w, rec, check, resourceVersion)
		w.Stop()
		if err != nil {
			return err
		}
	}
	return nil
}

func tpDrainWatch(ctx context.Context, w watch.Interface, rec *tpBindRecorder, check func() error, rv string) (string, error) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for !rec.done() {
		select {
		case <-ctx.Done():
			return rv, ctx.Err()
		case <-tick.C:
			if err := check(); err != nil {
				return rv, err
			}
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv, nil // the server ended the watch: resume from rv
			}
			if ev.Type == watch.Error {
				return rv, apierrors.FromObject(ev.Object)
			}
			if pod, ok := ev.Object.(*corev1.Pod); ok {
				rv = pod.ResourceVersion
				rec.observe(pod, time.Now())
			}
		}
	}
	return rv, nil
}

func tpCountGpuIDs(ctx context.Context, b *testing.B, client kubernetes.Interface, namespace string) int {
	b.Helper()
	list, err := client.CoreV1().Pods(namespace).List(context.WithoutCancel(ctx), metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for i := range list.Items {
		if _, ok := list.Items[i].Annotations[cluster.GpuIDsAnnotation]; ok {
			n++
		}
	}
	return n
}

// deleteThroughputPods deletes the arm's pods at once (grace 0: there is no
// kubelet to confirm) and waits until the apiserver and gpusched's model
// have no trace of them.
func deleteThroughputPods(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, client kubernetes.Interface, namespace string) {
	b.Helper()
	zero := int64(0)
	err := client.CoreV1().Pods(namespace).DeleteCollection(ctx,
		metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var left int
	var inUse float64
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return false, nil
		}
		left = len(list.Items)
		text, err := cp.GpuschedMetrics()
		if err != nil {
			return false, nil
		}
		m := tpParseProm(text)
		inUse = m.sum("gpusched_gpus", map[string]string{"state": "used"}) +
			m.sum("gpusched_gpus", map[string]string{"state": "shared"})
		return left == 0 && inUse == 0, nil
	})
	if err != nil {
		b.Fatalf("after deleting the pods of %s: %d left, gpusched still counts %v GPUs in use: %v", namespace, left, inUse, err)
	}
}

// ---- CPU and /metrics before and after an arm ----

// tpBenchClient names this test process (creates and the watch) in the CPU
// columns.
const tpBenchClient = "bench_client"

type throughputSnapshot struct {
	at        time.Time
	cpuTicks  map[string]float64
	scheduler tpSamples
	gpusched  tpSamples
	apiserver tpSamples
}

// tpSnapshotBefore scrapes first and reads CPU times last, so that the
// scrapes' own CPU falls outside the arm.
func tpSnapshotBefore(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, sched *controlplane.BenchScheduler) throughputSnapshot {
	b.Helper()
	var s throughputSnapshot
	s.scrape(ctx, b, cp, sched)
	s.cpuTicks = tpComponentTicks(b, cp, sched)
	s.at = time.Now()
	return s
}

// tpSnapshotAfter reads CPU times first, then scrapes.
func tpSnapshotAfter(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, sched *controlplane.BenchScheduler) throughputSnapshot {
	b.Helper()
	s := throughputSnapshot{at: time.Now(), cpuTicks: tpComponentTicks(b, cp, sched)}
	s.scrape(ctx, b, cp, sched)
	return s
}

func (s *throughputSnapshot) scrape(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, sched *controlplane.BenchScheduler) {
	b.Helper()
	ctx = context.WithoutCancel(ctx) // the arm's deadline may have passed
	text, err := sched.Metrics()
	if err != nil {
		b.Fatal(err)
	}
	s.scheduler = tpParseProm(text)
	if text, err = cp.GpuschedMetrics(); err != nil {
		b.Fatal(err)
	}
	s.gpusched = tpParseProm(text)
	raw, err := cp.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		b.Fatal(err)
	}
	s.apiserver = tpParseProm(string(raw))
}

func tpComponentTicks(b *testing.B, cp *controlplane.ControlPlane, sched *controlplane.BenchScheduler) map[string]float64 {
	b.Helper()
	pids := cp.Pids()
	pids[controlplane.KubeScheduler] = sched.Pid()
	pids[tpBenchClient] = os.Getpid()
	ticks := map[string]float64{}
	for name, pid := range pids {
		t, err := tpProcessTicks(pid)
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		ticks[name] = t
	}
	return ticks
}

// tpProcessTicks is utime+stime of /proc/<pid>/stat (fields 14 and 15, in
// clock ticks). The command name, field 2, may hold spaces: count from
// its closing parenthesis.
func tpProcessTicks(pid int) (float64, error) {
	if pid == 0 {
		return 0, fmt.Errorf("not running")
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	text := string(data)
	fields := strings.Fields(text[strings.LastIndexByte(text, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(fields))
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, fields[11], fields[12])
	}
	return utime + stime, nil
}

func tpArmFromSnapshots(before, after throughputSnapshot, pods int) throughputArm {
	arm := throughputArm{CPUSeconds: map[string]float64{}, CPUSecondsPerPod: map[string]float64{}}
	for name, t := range after.cpuTicks {
		seconds := (t - before.cpuTicks[name]) / tpClockTicks
		arm.CPUSeconds[name] = seconds
		arm.CPUSecondsPerPod[name] = seconds / float64(pods)
	}
	attempts := after.scheduler.histogram("scheduler_scheduling_attempt_duration_seconds", nil).
		minus(before.scheduler.histogram("scheduler_scheduling_attempt_duration_seconds", nil))
	arm.AttemptDuration = attempts.summary(1000)
	// The scheduling cycle proper (filter and score, extender calls
	// included): the serial part, which caps throughput at 1/duration.
	algorithm := after.scheduler.histogram("scheduler_scheduling_algorithm_duration_seconds", nil).
		minus(before.scheduler.histogram("scheduler_scheduling_algorithm_duration_seconds", nil))
	arm.AlgorithmDuration = algorithm.summary(1000)
	arm.ScheduleAttempts = map[string]float64{}
	for _, result := range after.scheduler.labelValues("scheduler_schedule_attempts_total", "result") {
		match := map[string]string{"result": result}
		arm.ScheduleAttempts[result] = after.scheduler.sum("scheduler_schedule_attempts_total", match) -
			before.scheduler.sum("scheduler_schedule_attempts_total", match)
	}
	arm.SchedulerRateLimitWaitS = after.scheduler.sum("rest_client_rate_limiter_duration_seconds_sum", nil) -
		before.scheduler.sum("rest_client_rate_limiter_duration_seconds_sum", nil)
	arm.APIServerRejected = after.apiserver.sum("apiserver_flowcontrol_rejected_requests_total", nil) -
		before.apiserver.sum("apiserver_flowcontrol_rejected_requests_total", nil)
	arm.APIServerRequests = tpAPIServerRequests(before.apiserver, after.apiserver)
	arm.APIServerWatchEvents = after.apiserver.sum("apiserver_watch_events_total", nil) -
		before.apiserver.sum("apiserver_watch_events_total", nil)
	arm.APIServerWatchBytes = after.apiserver.sum("apiserver_watch_events_sizes_sum", nil) -
		before.apiserver.sum("apiserver_watch_events_sizes_sum", nil)
	arm.APIServerTerminatedWatchers = after.apiserver.sum("apiserver_terminated_watchers_total", nil) -
		before.apiserver.sum("apiserver_terminated_watchers_total", nil)
	arm.GpuschedVerbs, arm.GpuschedBusyServerThreads = tpGpuschedVerbs(before.gpusched, after.gpusched, after.at.Sub(before.at))
	return arm
}

// tpAPIServerRequests differences apiserver_request_total by verb, resource
// and subresource, keeping codes other than 2xx apart.
func tpAPIServerRequests(before, after tpSamples) map[string]float64 {
	counts := map[string]float64{}
	add := func(samples tpSamples, sign float64) {
		for _, s := range samples {
			if s.name != "apiserver_request_total" || s.labels["resource"] == "" {
				continue
			}
			key := s.labels["verb"] + " " + s.labels["resource"]
			if sub := s.labels["subresource"]; sub != "" {
				key += "/" + sub
			}
			if code := s.labels["code"]; !strings.HasPrefix(code, "2") {
				key += " code=" + code
			}
			counts[key] += sign * s.value
		}
	}
	add(after, 1)
	add(before, -1)
	for key, n := range counts {
		if n == 0 {
			delete(counts, key)
		}
	}
	return counts
}

// tpGpuschedVerbs summarizes gpusched's server time per verb over the arm,
// and how many of its I/O threads were busy serving on average (server
// time summed over requests / wall time).
func tpGpuschedVerbs(before, after tpSamples, wall time.Duration) (map[string]tpVerbSummary, float64) {
	const name = "gpusched_extender_request_duration_seconds"
	verbs := map[string]tpVerbSummary{}
	busy := 0.0
	for _, verb := range after.labelValues(name+"_count", "verb") {
		match := map[string]string{"verb": verb}
		h := after.histogram(name, match).minus(before.histogram(name, match))
		if h.count == 0 {
			continue
		}
		s := h.summary(1e6)
		requests := after.sum("gpusched_extender_requests_total", match) - before.sum("gpusched_extender_requests_total", match)
		ok := map[string]string{"verb": verb, "code": "200"}
		errors := requests - (after.sum("gpusched_extender_requests_total", ok) - before.sum("gpusched_extender_requests_total", ok))
		verbs[verb] = tpVerbSummary{Count: s.Count, Errors: errors, MeanUs: s.Mean, P50Us: s.P50, P99Us: s.P99}
		busy += h.sum
	}
	if wall <= 0 {
		return verbs, 0
	}
	return verbs, busy / wall.Seconds()
}

// ---- Prometheus text format, as much as this benchmark reads ----

type tpSample struct {
	name   string
	labels map[string]string
	value  float64
}

type tpSamples []tpSample

// tpParseProm reads `name{label="value",...} number [timestamp]` lines;
// comments and lines it cannot read are skipped.
func tpParseProm(text string) tpSamples {
	var out tpSamples
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		if s, ok := tpParsePromLine(line); ok {
			out = append(out, s)
		}
	}
	return out
}

func tpParsePromLine(line string) (tpSample, bool) {
	s := tpSample{labels: map[string]string{}}
	end := strings.IndexAny(line, "{ ")
	if end <= 0 {
		return s, false
	}
	s.name, line = line[:end], line[end:]
	if line[0] == '{' {
		rest, ok := tpParsePromLabels(line[1:], s.labels)
		if !ok {
			return s, false
		}
		line = rest
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, false
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	s.value = v
	return s, err == nil
}

// tpParsePromLabels reads `a="x",b="y"}` into labels and returns what follows
// the brace. Values are Go-style quoted strings (\" \\ \n).
func tpParsePromLabels(text string, labels map[string]string) (string, bool) {
	for {
		text = strings.TrimLeft(text, " ,")
		if strings.HasPrefix(text, "}") {
			return text[1:], true
		}
		eq := strings.IndexByte(text, '=')
		if eq <= 0 || eq+1 >= len(text) || text[eq+1] != '"' {
			return "", false
		}
		key := strings.TrimSpace(text[:eq])
		quoted, err := strconv.QuotedPrefix(text[eq+1:])
		if err != nil {
			return "", false
		}
		value, err := strconv.Unquote(quoted)
		if err != nil {
			return "", false
		}
		labels[key] = value
		text = text[eq+1+len(quoted):]
	}
}

func (s tpSample) matches(name string, match map[string]string) bool {
	if s.name != name {
		return false
	}
	for k, v := range match {
		if s.labels[k] != v {
			return false
		}
	}
	return true
}

// sum adds every sample of name whose labels include match.
func (p tpSamples) sum(name string, match map[string]string) float64 {
	total := 0.0
	for _, s := range p {
		if s.matches(name, match) {
			total += s.value
		}
	}
	return total
}

// labelValues lists the values label takes among name's samples.
func (p tpSamples) labelValues(name, label string) []string {
	seen := map[string]bool{}
	for _, s := range p {
		if v, ok := s.labels[label]; ok && s.name == name {
			seen[v] = true
		}
	}
	return tpSortedKeys(seen)
}

// tpHistogram is a histogram summed over every series that matches:
// cumulative counts by upper bound.
type tpHistogram struct {
	buckets    map[float64]float64
	count, sum float64
}

func (p tpSamples) histogram(name string, match map[string]string) tpHistogram {
	h := tpHistogram{buckets: map[float64]float64{}}
	for _, s := range p {
		if !s.matches(name+"_bucket", match) {
			continue
		}
		le, err := strconv.ParseFloat(s.labels["le"], 64) // "+Inf" parses as +Inf
		if err == nil {
			h.buckets[le] += s.value
		}
	}
	h.count = p.sum(name+"_count", match)
	h.sum = p.sum(name+"_sum", match)
	return h
}

func (h tpHistogram) minus(o tpHistogram) tpHistogram {
	d := tpHistogram{buckets: map[float64]float64{}, count: h.count - o.count, sum: h.sum - o.sum}
	for le, v := range h.buckets {
		d.buckets[le] = v - o.buckets[le]
	}
	return d
}

// quantile estimates the q-quantile as Prometheus's histogram_quantile
// does: linear inside the bucket that holds it, the highest finite bound
// if it falls in +Inf.
func (h tpHistogram) quantile(q float64) float64 {
	bounds := make([]float64, 0, len(h.buckets))
	for le := range h.buckets {
		bounds = append(bounds, le)
	}
	sort.Float64s(bounds)
	if len(bounds) == 0 || h.count <= 0 {
		return 0
	}
	rank := q * h.buckets[bounds[len(bounds)-1]]
	lower, below := 0.0, 0.0
	for _, le := range bounds {
		cum := h.buckets[le]
		if cum >= rank {
			if math.IsInf(le, 1) {
				return lower
			}
			if cum == below {
				return le
			}
			return lower + (le-lower)*(rank-below)/(cum-below)
		}
		lower, below = le, cum
	}
	return lower
}

// summary converts seconds to the unit scale gives (1000: ms, 1e6: µs).
func (h tpHistogram) summary(scale float64) tpHistogramSummary {
	if h.count <= 0 {
		return tpHistogramSummary{}
	}
	return tpHistogramSummary{
		Count: h.count,
		Mean:  scale * h.sum / h.count,
		P50:   scale * h.quantile(0.5),
		P99:   scale * h.quantile(0.99),
	}
}
