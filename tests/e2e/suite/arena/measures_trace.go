package arena

import (
	"fmt"
	"maps"
	"time"
)

// UnplaceableAfter is how long a pod must stay unbound after its admission,
// having been marked Unschedulable, to count as admitted but unplaceable:
// kube-scheduler may mark a pod Unschedulable for a moment while pods
// it could replace are still leaving; two seconds is past that and short
// against the scenarios' runtimes.
const UnplaceableAfter = 2 * time.Second

// TraceMeasures are scenario 2's figures (computed for every scenario,
// one definition for both arms): how much of the cluster's GPUs pods
// held bound, how long tasks waited, and pods whose quota was granted but
// that no node could take.
type TraceMeasures struct {
	ClusterGPUs int `json:"cluster_gpus"`
	// Allocation: bound GPUs / cluster GPUs in the once-a-second series,
	// averaged over the arrival window (first to last scheduled arrival:
	// the offered load's interval) and over the wall; Peak the highest.
	AllocationArrivalsPct float64 `json:"allocation_arrivals_pct"`
	AllocationWallPct     float64 `json:"allocation_wall_pct"`
	AllocationPeakPct     float64 `json:"allocation_peak_pct"`
	// TaskWaitMs per workload: its first pod created -> every member slot
	// bound; TasksNeverBound are left out of it.
	TaskWaitMs      Quantiles `json:"task_wait_ms"`
	TasksNeverBound int       `json:"tasks_never_bound"`
	// Unplaceable pods were admitted (gates lifted, quota held), then
	// marked Unschedulable by kube-scheduler, and stayed unbound for at
	// least UnplaceableAfter after admission. UnplaceableGPUHours are the
	// GPUs they held that way: GPUs x (bound, else ended, else the wall's
	// end - admitted), on the arena's clock.
	Unplaceable         int      `json:"unplaceable_pods"`
	UnplaceableGPUHours float64  `json:"unplaceable_gpu_hours"`
	UnplaceableExamples []string `json:"unplaceable_examples,omitempty"`
}

func traceMeasures(in MeasureInput, ws []*workload, samples []Sample, end time.Time) TraceMeasures {
	t := TraceMeasures{ClusterGPUs: in.ClusterGPUs}
	t.AllocationArrivalsPct, t.AllocationWallPct, t.AllocationPeakPct = allocation(in, samples)
	t.TaskWaitMs, t.TasksNeverBound = taskWaits(ws)
	t.unplaceable(in, end)
	return t
}

// allocation is the mean bound share over the arrival window and over
// every sample, and the peak, in percent.
func allocation(in MeasureInput, samples []Sample) (arrivals, wall, peak float64) {
	if in.ClusterGPUs <= 0 || len(samples) == 0 {
		return 0, 0, 0
	}
	from, to := arrivalWindowMs(in.Arrivals)
	var inWindow, all float64
	n := 0
	for _, s := range samples {
		pct := 100 * float64(s.Bound) / float64(in.ClusterGPUs)
		all += pct
		peak = max(peak, pct)
		if s.T >= from && s.T <= to {
			inWindow += pct
			n++
		}
	}
	if n > 0 {
		arrivals = inWindow / float64(n)
	}
	return arrivals, all / float64(len(samples)), peak
}

// arrivalWindowMs is the first and last scheduled arrival.
func arrivalWindowMs(arrivals []Arrival) (from, to float64) {
	for i, a := range arrivals {
		at := ms(a.At)
		if i == 0 || at < from {
			from = at
		}
		to = max(to, at)
	}
	return from, to
}

// taskWaits: per workload, its first pod's creation to every slot bound.
func taskWaits(ws []*workload) (Quantiles, int) {
	var waits []float64
	never := 0
	for _, w := range ws {
		created := w.firstCreated()
		bound := w.reached(boundAt)
		if created.IsZero() || bound.IsZero() {
			never++
			continue
		}
		waits = append(waits, ms(bound.Sub(created)))
	}
	return quantiles(waits), never
}

// firstCreated is when the workload's first pod was created (its create
// call returned, or the watch saw it, whichever was first).
func (w *workload) firstCreated() time.Time {
	var first time.Time
	for _, pods := range w.slots {
		for _, p := range pods {
			for _, t := range []time.Time{p.Created, p.Seen} {
				if !t.IsZero() && (first.IsZero() || t.Before(first)) {
					first = t
				}
			}
		}
	}
	return first
}

func (t *TraceMeasures) unplaceable(in MeasureInput, end time.Time) {
	var gpuTime time.Duration
	for _, p := range in.Pods {
		if p.Admitted.IsZero() || p.Unschedulable.IsZero() || p.Unschedulable.Before(p.Admitted) {
			continue
		}
		until := p.Bound
		if until.IsZero() {
			until = p.Ended
		}
		if until.IsZero() || until.After(end) {
			until = end
		}
		if until.Sub(p.Admitted) < UnplaceableAfter {
			continue
		}
		t.Unplaceable++
		gpuTime += time.Duration(p.GPUs) * held(p.Admitted, until, in.Start, end)
		if len(t.UnplaceableExamples) < 5 {
			t.UnplaceableExamples = append(t.UnplaceableExamples, fmt.Sprintf("%s/%s (%d GPUs) admitted at %.0f ms, unbound for %.0f ms",
				p.Namespace, p.Name, p.GPUs, ms(p.Admitted.Sub(in.Start)), ms(until.Sub(p.Admitted))))
		}
	}
	t.UnplaceableGPUHours = gpuTime.Hours()
}

// Figures are the trace measures the report takes medians of.
func (t TraceMeasures) Figures() map[string]float64 {
	return map[string]float64{
		"allocation_arrivals_pct": t.AllocationArrivalsPct,
		"allocation_wall_pct":     t.AllocationWallPct,
		"allocation_peak_pct":     t.AllocationPeakPct,
		"task_wait_p50_ms":        t.TaskWaitMs.P50,
		"task_wait_p90_ms":        t.TaskWaitMs.P90,
		"tasks_never_bound":       float64(t.TasksNeverBound),
		"unplaceable_pods":        float64(t.Unplaceable),
		"unplaceable_gpu_hours":   t.UnplaceableGPUHours,
	}
}

// traceDefinitions join Definitions (at init, so that report.go's table
// needs no edit for them).
var traceDefinitions = map[string]string{
	"allocation_arrivals_pct": "GPU allocation ratio: bound GPUs (pods with spec.nodeName, not ended) / the nodes' GPUs, " +
		"sampled once a second, mean over the samples from the first to the last scheduled arrival",
	"allocation_wall_pct": "the same ratio, mean over every sample from the round's start to the last finish",
	"allocation_peak_pct": "the same ratio's highest sample",
	"task_wait_*_ms":      "per workload (a trace task: one pod), its first pod created -> every member slot bound; nearest rank",
	"tasks_never_bound":   "workloads with a member slot never bound (left out of task_wait)",
	"unplaceable_pods": "pods admitted (scheduling gates lifted, so their quota held), then marked PodScheduled=False " +
		"reason Unschedulable by kube-scheduler, and unbound for at least 2 s after admission",
	"unplaceable_gpu_hours": "those pods' GPUs x (bound, else ended, else the round's end - admitted), in hours of the " +
		"arena's clock (a trace scenario's runtime factor converts them to the trace's)",
}

func init() { maps.Copy(Definitions, traceDefinitions) }
