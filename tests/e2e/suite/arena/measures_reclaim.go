package arena

import (
	"sort"
	"time"
)

// ReclaimMeasures say what a reclaim cost (scenario 4), from the pods
// alone, the same for both arms: how long each queue's workloads waited
// to run, which workloads were evicted, and the work their evicted pods
// lost (nothing checkpoints, so everything a pod did since it started
// running is lost when it is evicted).
type ReclaimMeasures struct {
	// Queues by namespace (a LocalQueue each).
	Queues map[string]QueueRunning `json:"queues"`
	// Victims are the workloads with an evicted pod: one that ended
	// without succeeding and was replaced.
	Victims     []Victim `json:"victims,omitempty"`
	EvictedPods int      `json:"evicted_pods"`
	// GPUHoursLost sums over evicted pods GPUs x (ended - Running); a pod
	// evicted before it ran loses nothing.
	GPUHoursLost float64 `json:"gpu_hours_lost"`
}

// QueueRunning is one queue's submission -> all running: per workload,
// its arrival -> every slot has had a pod Running; and from the queue's
// first arrival to the last of its workloads all running.
type QueueRunning struct {
	Workloads int `json:"workloads"`
	// NeverRunning workloads never had every slot Running.
	NeverRunning int       `json:"never_running"`
	ToRunningMs  Quantiles `json:"to_running_ms"`
	// AllRunningMs is the queue's first arrival -> its last workload all
	// running (-1 if one never was).
	AllRunningMs float64 `json:"all_running_ms"`
	// PerWorkloadMs: arrival -> all running, by workload (-1: never).
	PerWorkloadMs map[string]float64 `json:"per_workload_ms"`
}

// Victim is a workload that lost pods to eviction.
type Victim struct {
	Workload    string `json:"workload"`
	GPUsPerPod  int    `json:"gpus_per_pod"`
	EvictedPods int    `json:"evicted_pods"`
	// FirstEvictedMs: when its first evicted pod ended, from the start.
	FirstEvictedMs float64 `json:"first_evicted_ms"`
	GPUHoursLost   float64 `json:"gpu_hours_lost"`
}

func runningAt(p *PodRecord) time.Time { return p.Running }

func reclaimMeasures(in MeasureInput, ws []*workload) ReclaimMeasures {
	r := ReclaimMeasures{Queues: map[string]QueueRunning{}}
	for ns, queue := range byNamespace(ws) {
		r.Queues[ns] = queueRunning(in.Start, queue)
	}
	for _, w := range ws {
		if v, ok := w.victim(in.Start); ok {
			r.Victims = append(r.Victims, v)
			r.EvictedPods += v.EvictedPods
			r.GPUHoursLost += v.GPUHoursLost
		}
	}
	sort.Slice(r.Victims, func(i, j int) bool { return r.Victims[i].Workload < r.Victims[j].Workload })
	return r
}

func byNamespace(ws []*workload) map[string][]*workload {
	out := map[string][]*workload{}
	for _, w := range ws {
		out[w.Queue.Namespace] = append(out[w.Queue.Namespace], w)
	}
	return out
}

func queueRunning(start time.Time, ws []*workload) QueueRunning {
	q := QueueRunning{Workloads: len(ws), PerWorkloadMs: map[string]float64{}}
	var waits []float64
	var first, last time.Time
	for _, w := range ws {
		arrival := start.Add(w.At)
		if first.IsZero() || arrival.Before(first) {
			first = arrival
		}
		running := w.reached(runningAt)
		if running.IsZero() {
			q.NeverRunning++
			q.PerWorkloadMs[w.Name] = -1
			continue
		}
		waits = append(waits, ms(running.Sub(arrival)))
		q.PerWorkloadMs[w.Name] = ms(running.Sub(arrival))
		if running.After(last) {
			last = running
		}
	}
	q.ToRunningMs = quantiles(waits)
	q.AllRunningMs = -1
	if q.NeverRunning == 0 && !last.IsZero() {
		q.AllRunningMs = ms(last.Sub(first))
	}
	return q
}

// victim: w's pods that ended without succeeding and were replaced (a
// later attempt of the same slot exists), and the work they lost.
func (w *workload) victim(start time.Time) (Victim, bool) {
	v := Victim{Workload: w.Key(), GPUsPerPod: w.GPUs()}
	var lost time.Duration
	var firstEvicted time.Time
	for _, pods := range w.slots {
		for _, p := range pods {
			if !evicted(p, pods) {
				continue
			}
			v.EvictedPods++
			if firstEvicted.IsZero() || p.Ended.Before(firstEvicted) {
				firstEvicted = p.Ended
			}
			if !p.Running.IsZero() && p.Ended.After(p.Running) {
				lost += time.Duration(p.GPUs) * p.Ended.Sub(p.Running)
			}
		}
	}
	if v.EvictedPods == 0 {
		return v, false
	}
	v.FirstEvictedMs = ms(firstEvicted.Sub(start))
	v.GPUHoursLost = lost.Hours()
	return v, true
}

// evicted: p ended without succeeding and a later attempt of its slot
// exists.
func evicted(p *PodRecord, slot []*PodRecord) bool {
	if p.Ended.IsZero() || p.Succeeded {
		return false
	}
	for _, q := range slot {
		if q.Attempt > p.Attempt {
			return true
		}
	}
	return false
}
