package benchkit

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"gpusched.io/e2e/suite/controlplane"
	"gpusched.io/e2e/suite/promtext"
)

// What the benchmark measures around an arm: CPU times and /metrics
// before and after, and the arm's figures from their differences.

// tpBenchClient names this test process (creates and the watch) in the CPU
// columns.
const tpBenchClient = "bench_client"

type throughputSnapshot struct {
	at        time.Time
	cpuTicks  map[string]float64
	scheduler promtext.Samples
	gpusched  promtext.Samples
	apiserver promtext.Samples
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
	s.scheduler = promtext.Parse(text)
	if text, err = cp.GpuschedMetrics(); err != nil {
		b.Fatal(err)
	}
	s.gpusched = promtext.Parse(text)
	s.apiserver = APIServerMetrics(ctx, b, cp)
}

// APIServerMetrics scrapes the API server's /metrics.
func APIServerMetrics(ctx context.Context, b testing.TB, cp *controlplane.ControlPlane) promtext.Samples {
	b.Helper()
	raw, err := cp.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.WithoutCancel(ctx))
	if err != nil {
		b.Fatal(err)
	}
	return promtext.Parse(string(raw))
}

// ProfileAPIServer takes a CPU profile of kube-apiserver over the next
// `seconds` (its /debug/pprof/profile) into path, in the background; the
// function it returns waits for it. A failure is logged, not fatal: the
// profile is a diagnosis beside the figures, not one of them.
func ProfileAPIServer(cp *controlplane.ControlPlane, seconds int, path string, logf func(string, ...any)) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		raw, err := cp.Client.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", strconv.Itoa(seconds)).DoRaw(context.Background())
		if err == nil {
			err = os.WriteFile(path, raw, 0o644)
		}
		if err != nil {
			logf("kube-apiserver profile %s: %v", path, err)
		}
	}()
	return func() { <-done }
}

func tpComponentTicks(b *testing.B, cp *controlplane.ControlPlane, sched *controlplane.BenchScheduler) map[string]float64 {
	b.Helper()
	pids := cp.Pids()
	pids[controlplane.KubeScheduler] = sched.Pid()
	return tpTicksOf(b, pids)
}

// ProcessCPUMs is the CPU time (user + system) each running control-plane
// process and this benchmark process have used so far, in ms, at the
// kernel's clock-tick resolution (10 ms).
func ProcessCPUMs(b testing.TB, cp *controlplane.ControlPlane) map[string]float64 {
	b.Helper()
	out := tpTicksOf(b, cp.Pids())
	for name, t := range out {
		out[name] = t * 1000 / tpClockTicks
	}
	return out
}

// tpTicksOf reads each named process's CPU ticks, and this process's as
// bench_client.
func tpTicksOf(b testing.TB, pids map[string]int) map[string]float64 {
	b.Helper()
	pids[tpBenchClient] = os.Getpid()
	ticks := map[string]float64{}
	for name, pid := range pids {
		t, err := ProcessCPUTicks(pid)
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		ticks[name] = t
	}
	return ticks
}

// ProcessCPUTicks is utime+stime of /proc/<pid>/stat (fields 14 and 15,
// in clock ticks). The command name, field 2, may hold spaces: count from
// its closing parenthesis.
func ProcessCPUTicks(pid int) (float64, error) {
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
	attempts := after.scheduler.Histogram("scheduler_scheduling_attempt_duration_seconds", nil).
		Minus(before.scheduler.Histogram("scheduler_scheduling_attempt_duration_seconds", nil))
	arm.AttemptDuration = tpSummary(attempts, 1000)
	// The scheduling cycle proper (filter and score, extender calls
	// included): the serial part, which caps throughput at 1/duration.
	algorithm := after.scheduler.Histogram("scheduler_scheduling_algorithm_duration_seconds", nil).
		Minus(before.scheduler.Histogram("scheduler_scheduling_algorithm_duration_seconds", nil))
	arm.AlgorithmDuration = tpSummary(algorithm, 1000)
	arm.ScheduleAttempts = map[string]float64{}
	for _, result := range after.scheduler.LabelValues("scheduler_schedule_attempts_total", "result") {
		match := map[string]string{"result": result}
		arm.ScheduleAttempts[result] = after.scheduler.Sum("scheduler_schedule_attempts_total", match) -
			before.scheduler.Sum("scheduler_schedule_attempts_total", match)
	}
	arm.BatchAttempts = map[string]float64{}
	for _, result := range after.scheduler.LabelValues("scheduler_batch_attempts_total", "result") {
		match := map[string]string{"result": result}
		arm.BatchAttempts[result] = after.scheduler.Sum("scheduler_batch_attempts_total", match) -
			before.scheduler.Sum("scheduler_batch_attempts_total", match)
	}
	arm.SchedulerRateLimitWaitS = after.scheduler.Sum("rest_client_rate_limiter_duration_seconds_sum", nil) -
		before.scheduler.Sum("rest_client_rate_limiter_duration_seconds_sum", nil)
	arm.APIServerRejected = after.apiserver.Sum("apiserver_flowcontrol_rejected_requests_total", nil) -
		before.apiserver.Sum("apiserver_flowcontrol_rejected_requests_total", nil)
	arm.APIServerRequests = APIServerRequests(before.apiserver, after.apiserver)
	arm.APIServerWatchEvents = after.apiserver.Sum("apiserver_watch_events_total", nil) -
		before.apiserver.Sum("apiserver_watch_events_total", nil)
	arm.APIServerWatchBytes = after.apiserver.Sum("apiserver_watch_events_sizes_sum", nil) -
		before.apiserver.Sum("apiserver_watch_events_sizes_sum", nil)
	arm.APIServerTerminatedWatchers = after.apiserver.Sum("apiserver_terminated_watchers_total", nil) -
		before.apiserver.Sum("apiserver_terminated_watchers_total", nil)
	arm.GpuschedVerbs, arm.GpuschedBusyServerThreads = tpGpuschedVerbs(before.gpusched, after.gpusched, after.at.Sub(before.at))
	return arm
}

// APIServerRequests differences apiserver_request_total by verb, resource
// and subresource, keeping codes other than 2xx apart.
func APIServerRequests(before, after promtext.Samples) map[string]float64 {
	counts := map[string]float64{}
	add := func(samples promtext.Samples, sign float64) {
		for _, s := range samples {
			if s.Name != "apiserver_request_total" || s.Labels["resource"] == "" {
				continue
			}
			key := s.Labels["verb"] + " " + s.Labels["resource"]
			if sub := s.Labels["subresource"]; sub != "" {
				key += "/" + sub
			}
			if code := s.Labels["code"]; !strings.HasPrefix(code, "2") {
				key += " code=" + code
			}
			counts[key] += sign * s.Value
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
func tpGpuschedVerbs(before, after promtext.Samples, wall time.Duration) (map[string]tpVerbSummary, float64) {
	const name = "gpusched_extender_request_duration_seconds"
	verbs := map[string]tpVerbSummary{}
	busy := 0.0
	for _, verb := range after.LabelValues(name+"_count", "verb") {
		match := map[string]string{"verb": verb}
		h := after.Histogram(name, match).Minus(before.Histogram(name, match))
		if h.Count == 0 {
			continue
		}
		s := tpSummary(h, 1e6)
		requests := after.Sum("gpusched_extender_requests_total", match) - before.Sum("gpusched_extender_requests_total", match)
		ok := map[string]string{"verb": verb, "code": "200"}
		errors := requests - (after.Sum("gpusched_extender_requests_total", ok) - before.Sum("gpusched_extender_requests_total", ok))
		verbs[verb] = tpVerbSummary{Count: s.Count, Errors: errors, MeanUs: s.Mean, P50Us: s.P50, P99Us: s.P99}
		busy += h.Sum
	}
	if wall <= 0 {
		return verbs, 0
	}
	return verbs, busy / wall.Seconds()
}
