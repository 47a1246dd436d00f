package benchkit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkKubeSchedulerThroughput's result file (E2E_BENCH_OUT): the
// conditions of the measurement and one record per node count and arm.

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
	Rounds           int               `json:"rounds"`
	NodeShape        string            `json:"node_shape"`
	PodShape         string            `json:"pod_shape"`
	Kubelet          string            `json:"kubelet"`
	ArmA             string            `json:"arm_a,omitempty"`
	ArmAUnbatched    string            `json:"arm_a_unbatched,omitempty"`
	ArmB             string            `json:"arm_b,omitempty"`
	KubeScheduler    map[string]any    `json:"kube_scheduler"`
	APIServerArgs    []string          `json:"apiserver_args"`
	Client           map[string]any    `json:"client"`
	Gpusched         map[string]any    `json:"gpusched"`
	Measure          string            `json:"measure"`
	QuantileEstimate string            `json:"quantile_estimate"`
}

type throughputRun struct {
	Nodes            int           `json:"nodes"`
	Round            int           `json:"round"`
	Pods             int           `json:"pods"`
	NodeSetupSeconds float64       `json:"node_setup_seconds"`
	A                throughputArm `json:"a"`
	AUnbatched       throughputArm `json:"a_unbatched"`
	B                throughputArm `json:"b"`
	// Ratio is B.PodsPerSecond / A.PodsPerSecond: the target's ratio.
	Ratio float64 `json:"ratio_b_over_a"`
	// RatioUnbatched is B.PodsPerSecond / AUnbatched.PodsPerSecond: the
	// extender's cost against the algorithm kube-scheduler runs with it.
	RatioUnbatched float64 `json:"ratio_b_over_a_unbatched"`
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
	// BatchAttempts is scheduler_batch_attempts_total by result
	// (hint_used, hint_not_used, no_hint): how often OpportunisticBatching
	// spared kube-scheduler a full filter and score.
	BatchAttempts           map[string]float64 `json:"batch_attempts"`
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
			MachineBefore: Machine(),
			Versions:      map[string]string{"go_client": runtime.Version()},
			Pods:          s.pods,
			NodeCounts:    s.nodeCounts,
			Rounds:        s.rounds,
			NodeShape: "copies of deploy/examples/demo-cluster.yaml's dgx-h100-2: 8x NVIDIA-H100-80GB-HBM3 " +
				"with its GFD labels, 224 cpu, ~2 TiB memory, 110 pods allocatable, Ready; 4 nodes a rack, 32 a block",
			PodShape: "1 nvidia.com/gpu (request = limit) + 100m cpu, pause image, schedulerName gpusched",
			Kubelet:  "none (controlplane.Options.Run without Kubelet): bound pods stay Pending with spec.nodeName set",
			ArmA:     "deploy/kube-scheduler-config.yaml without extenders: in-tree plugins only (NodeResourcesFit counts nvidia.com/gpu)",
			ArmAUnbatched: "arm a with " + tpNoBatching + ": the in-tree algorithm kube-scheduler runs " +
				"whenever a profile has an extender (it then turns batching off itself)",
			ArmB: "deploy/kube-scheduler-config.yaml as shipped: gpusched filter, prioritize, preempt, bind (nodeCacheCapable)",
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
	// deploy/'s Deployment runs gpusched at verbosity 0 with JSON logs and
	// --filter-keep-best=1; the fixture's -v 1 would add a debug line per
	// filter call.
	args := []string{"-v", "0", "--log-format", "json", "--bind-deadline-ms", "3000", "--filter-keep-best", "1"}
	if s.gpuschedThreads > 0 {
		args = append(args, "--threads", strconv.Itoa(s.gpuschedThreads))
	}
	return args
}

// Machine is what the other bench/results files record: cores,
// kernel and the load average (the machine is shared).
func Machine() map[string]any {
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

// WriteJSONReport writes a benchmark's result file, indented.
func WriteJSONReport(b testing.TB, path string, report any) {
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
