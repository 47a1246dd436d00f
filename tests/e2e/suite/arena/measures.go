package arena

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Measures are one round's results, computed from the pods alone
// (PodRecords), one definition for both arms. Times are milliseconds
// from the round's start (the replay's zero), durations milliseconds.
//
// A workload's arrival is its scheduled time (the same in both arms); it
// is admitted when every member slot has had a pod admitted (its gate
// lifted), running when every slot has had a pod bound, finished when
// every slot has a Succeeded pod. The first pod of a slot to reach a state
// counts, so a preempted and readmitted workload counts its first
// admission (Kueue's runner counts its last).
type Measures struct {
	Workloads int `json:"workloads"`
	// Complete workloads (every slot Succeeded) within the timeout.
	Complete int `json:"complete"`
	// Pods created, Replacements among them (pods that replaced a member
	// that ended without succeeding).
	Pods         int `json:"pods"`
	Replacements int `json:"replacements"`
	// FailedPods ended without succeeding (preempted, evicted).
	FailedPods int `json:"failed_pods"`
	// UngatedAtCreation pods had no scheduling gate when first seen (the
	// arm's webhook did not take them in).
	UngatedAtCreation int `json:"ungated_at_creation"`
	// WallMs runs from the start to the last workload's finish (to the
	// end of the round if some never finished).
	WallMs float64 `json:"wall_ms"`
	// ArrivalLagMs: how late the replay sent arrivals (the client and the
	// API server's backlog; the same schedule for both arms).
	ArrivalLagMs Quantiles `json:"arrival_lag_ms"`
	// Classes: per workload class, Kueue's "average time to admission"
	// and more.
	Classes map[string]ClassMeasures `json:"classes"`
	// Wait over every workload: arrival -> admitted, arrival -> running.
	WaitToAdmissionMs Quantiles `json:"wait_to_admission_ms"`
	WaitToRunningMs   Quantiles `json:"wait_to_running_ms"`
	Usage             Usage     `json:"usage"`
	AdmittedUnbound   Unbound   `json:"admitted_unbound"`
	Gangs             GangCheck `json:"gangs"`
	// Series samples the cluster once a second.
	Series []Sample `json:"series"`
	// Trace: allocation, task waits and pods admitted but unplaceable
	// (scenario 2's figures, computed for every scenario).
	Trace TraceMeasures `json:"trace"`
	// GangPlacement (scenario 3), Reclaim (scenario 4) and the order of
	// admissions (compared between arms in the report).
	GangPlacement  GangMeasures    `json:"gang_placement"`
	Reclaim        ReclaimMeasures `json:"reclaim"`
	AdmissionOrder []Admission     `json:"admission_order,omitempty"`
	// Flavors each workload's pods were bound on (workloadFlavors), when
	// the policy has more than one ResourceFlavor.
	Flavors map[string][]string `json:"flavors,omitempty"`
	// Domains each workload's pods ran in (workloadDomains), when the
	// scenario names a DomainLabel.
	Domains map[string][]string `json:"domains,omitempty"`
}

// Quantiles of a set of values (nearest rank).
type Quantiles struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	Max   float64 `json:"max"`
}

// ClassMeasures are one workload class's.
type ClassMeasures struct {
	Workloads int `json:"workloads"`
	Complete  int `json:"complete"`
	// Evicted workloads had a member end without succeeding.
	Evicted           int       `json:"evicted"`
	TimeToAdmissionMs Quantiles `json:"time_to_admission_ms"`
	TimeToRunningMs   Quantiles `json:"time_to_running_ms"`
	TimeToFinishMs    Quantiles `json:"time_to_finish_ms"`
}

// Usage is GPU quota in use: a pod holds 1 GPU of its ClusterQueue from
// its admission to its end. Percentages are of nominal quota x wall time,
// as Kueue's checker computes its ClusterQueue class's usage
// (clusterQueueClassesMinUsage: used / (nominal x elapsed)).
type Usage struct {
	// AllPct is over every ClusterQueue together (Kueue's class figure).
	AllPct float64 `json:"all_pct"`
	// MinPct is the least used ClusterQueue's, MinQueue its name.
	MinPct   float64            `json:"min_pct"`
	MinQueue string             `json:"min_queue"`
	PerQueue map[string]float64 `json:"per_queue_pct"`
}

// Unbound is pods admitted but not (yet) bound.
type Unbound struct {
	Max  int     `json:"max"`
	Mean float64 `json:"mean"`
	// NeverBound pods were admitted and never bound.
	NeverBound int `json:"never_bound"`
	// AdmitToBindMs per pod bound.
	AdmitToBindMs Quantiles `json:"admit_to_bind_ms"`
}

// GangCheck: a pod bound while its gang was incomplete (a member slot
// with no pod, neither live nor Succeeded: not created yet, or failed and
// not replaced yet) is a violation. A pod bound while a member of its
// gang still had its scheduling gate (created, not yet admitted) is
// counted apart: the gang exists whole, but was not released whole.
type GangCheck struct {
	Violations int      `json:"violations"`
	Examples   []string `json:"examples,omitempty"`
	// BoundBeforeGangAdmitted pods were bound while another member of
	// their gang was still gated.
	BoundBeforeGangAdmitted int      `json:"bound_before_gang_admitted"`
	AdmittedExamples        []string `json:"bound_before_gang_admitted_examples,omitempty"`
}

// Sample is the cluster at T ms: GPUs admitted (held), bound, and pods
// waiting (created, not admitted).
type Sample struct {
	T        float64 `json:"t_ms"`
	Admitted int     `json:"admitted_gpus"`
	Bound    int     `json:"bound_gpus"`
	Waiting  int     `json:"waiting_pods"`
}

// MeasureInput is what Compute reads.
type MeasureInput struct {
	Policy   *PolicyInfo
	Arrivals []Arrival
	Pods     []PodRecord
	Start    time.Time
	// End is when the round stopped watching.
	End  time.Time
	Lags []time.Duration
	// Replacements the replayer created.
	Replacements int
	// ClusterGPUs are the nodes' GPUs (for the allocation ratio).
	ClusterGPUs int
	// NodeLabels are the scenario's labels of each node (NodeLabels), to
	// tell the flavor a pod ran on.
	NodeLabels map[string]map[string]string
	// DomainLabel is the scenario's (workloadDomains).
	DomainLabel string
}

// Compute derives the round's measures.
func Compute(in MeasureInput) Measures {
	ws := groupWorkloads(in)
	m := Measures{Workloads: len(in.Arrivals), Pods: len(in.Pods), Replacements: in.Replacements}
	m.WallMs = wallMs(in, ws)
	wallEnd := in.Start.Add(time.Duration(m.WallMs * float64(time.Millisecond)))
	for _, p := range in.Pods {
		if !p.Ended.IsZero() && !p.Succeeded {
			m.FailedPods++
		}
		if !p.Seen.IsZero() && !p.Gated {
			m.UngatedAtCreation++
		}
	}
	m.ArrivalLagMs = quantiles(durationsMs(in.Lags))
	m.Classes, m.WaitToAdmissionMs, m.WaitToRunningMs = classMeasures(in, ws)
	for _, c := range m.Classes {
		m.Complete += c.Complete
	}
	m.Usage = usage(in, wallEnd)
	m.AdmittedUnbound = unbound(in, wallEnd)
	m.Gangs = gangCheck(in, ws)
	m.Series = series(in, wallEnd)
	m.Trace = traceMeasures(in, ws, m.Series, wallEnd)
	m.GangPlacement = gangMeasures(ws, in.End)
	m.Reclaim = reclaimMeasures(in, ws)
	m.AdmissionOrder = admissionOrder(in, ws)
	m.Flavors = workloadFlavors(in, ws)
	m.Domains = workloadDomains(in, ws)
	return m
}

// workload is an arrival with its pods by member slot.
type workload struct {
	Arrival
	slots [][]*PodRecord
}

func groupWorkloads(in MeasureInput) []*workload {
	byKey := map[string]*workload{}
	var out []*workload
	for _, a := range in.Arrivals {
		w := &workload{Arrival: a, slots: make([][]*PodRecord, a.Pods)}
		byKey[a.Key()] = w
		out = append(out, w)
	}
	for i := range in.Pods {
		p := &in.Pods[i]
		if w, ok := byKey[p.Workload]; ok && p.Member >= 0 && p.Member < len(w.slots) {
			w.slots[p.Member] = append(w.slots[p.Member], p)
		}
	}
	return out
}

// reached is when every slot first had a pod with at(pod) set (zero if
// some slot never did).
func (w *workload) reached(at func(*PodRecord) time.Time) time.Time {
	var last time.Time
	for _, pods := range w.slots {
		var first time.Time
		for _, p := range pods {
			if t := at(p); !t.IsZero() && (first.IsZero() || t.Before(first)) {
				first = t
			}
		}
		if first.IsZero() {
			return time.Time{}
		}
		if first.After(last) {
			last = first
		}
	}
	return last
}

func admittedAt(p *PodRecord) time.Time { return p.Admitted }
func boundAt(p *PodRecord) time.Time    { return p.Bound }
func succeededAt(p *PodRecord) time.Time {
	if p.Succeeded {
		return p.Ended
	}
	return time.Time{}
}

func (w *workload) evicted() bool {
	for _, pods := range w.slots {
		for _, p := range pods {
			if !p.Ended.IsZero() && !p.Succeeded {
				return true
			}
		}
	}
	return false
}

// wallMs is the start to the last finish, or to End if a workload never
// finished.
func wallMs(in MeasureInput, ws []*workload) float64 {
	last := in.Start
	for _, w := range ws {
		done := w.reached(succeededAt)
		if done.IsZero() {
			return ms(in.End.Sub(in.Start))
		}
		if done.After(last) {
			last = done
		}
	}
	return ms(last.Sub(in.Start))
}

func classMeasures(in MeasureInput, ws []*workload) (map[string]ClassMeasures, Quantiles, Quantiles) {
	type acc struct {
		c                      ClassMeasures
		admit, running, finish []float64
	}
	byClass := map[string]*acc{}
	var allAdmit, allRunning []float64
	for _, w := range ws {
		a := byClass[w.Class]
		if a == nil {
			a = &acc{}
			byClass[w.Class] = a
		}
		a.c.Workloads++
		if w.evicted() {
			a.c.Evicted++
		}
		arrival := in.Start.Add(w.At)
		if t := w.reached(admittedAt); !t.IsZero() {
			a.admit = append(a.admit, ms(t.Sub(arrival)))
			allAdmit = append(allAdmit, ms(t.Sub(arrival)))
		}
		if t := w.reached(boundAt); !t.IsZero() {
			a.running = append(a.running, ms(t.Sub(arrival)))
			allRunning = append(allRunning, ms(t.Sub(arrival)))
		}
		if t := w.reached(succeededAt); !t.IsZero() {
			a.c.Complete++
			a.finish = append(a.finish, ms(t.Sub(arrival)))
		}
	}
	out := map[string]ClassMeasures{}
	for class, a := range byClass {
		a.c.TimeToAdmissionMs, a.c.TimeToRunningMs, a.c.TimeToFinishMs = quantiles(a.admit), quantiles(a.running), quantiles(a.finish)
		out[class] = a.c
	}
	return out, quantiles(allAdmit), quantiles(allRunning)
}

// held is the interval [from, to) clipped to [start, end); to zero means
// still held at end.
func held(from, to, start, end time.Time) time.Duration {
	if from.IsZero() {
		return 0
	}
	if to.IsZero() || to.After(end) {
		to = end
	}
	if from.Before(start) {
		from = start
	}
	if !to.After(from) {
		return 0
	}
	return to.Sub(from)
}

func usage(in MeasureInput, end time.Time) Usage {
	used := map[string]time.Duration{}
	for _, p := range in.Pods {
		cq := in.Policy.ClusterQueueOf[QueueRef{Namespace: p.Namespace, LocalQueue: p.Queue}]
		used[cq] += time.Duration(p.GPUs) * held(p.Admitted, p.Ended, in.Start, end)
	}
	wall := end.Sub(in.Start)
	u := Usage{PerQueue: map[string]float64{}, MinPct: math.Inf(1)}
	var allUsed time.Duration
	var allNominal int64
	for _, cq := range in.Policy.ClusterQueues {
		nominal := in.Policy.NominalGPUs[cq]
		if nominal == 0 || wall <= 0 {
			continue
		}
		pct := 100 * float64(used[cq]) / (float64(nominal) * float64(wall))
		u.PerQueue[cq] = pct
		if pct < u.MinPct {
			u.MinPct, u.MinQueue = pct, cq
		}
		allUsed += used[cq]
		allNominal += nominal
	}
	if allNominal > 0 {
		u.AllPct = 100 * float64(allUsed) / (float64(allNominal) * float64(wall))
	}
	if math.IsInf(u.MinPct, 1) {
		u.MinPct = 0
	}
	return u
}

func unbound(in MeasureInput, end time.Time) Unbound {
	var u Unbound
	var waits []float64
	var area time.Duration
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, p := range in.Pods {
		if p.Admitted.IsZero() {
			continue
		}
		until := p.Bound
		if until.IsZero() {
			u.NeverBound++
			until = p.Ended
		} else {
			waits = append(waits, ms(p.Bound.Sub(p.Admitted)))
		}
		area += held(p.Admitted, until, in.Start, end)
		edges = append(edges, edge{p.Admitted, 1})
		if !until.IsZero() {
			edges = append(edges, edge{until, -1})
		}
	}
	sort.Slice(edges, func(i, j int) bool {
		if !edges[i].at.Equal(edges[j].at) {
			return edges[i].at.Before(edges[j].at)
		}
		return edges[i].delta < edges[j].delta
	})
	n := 0
	for _, e := range edges {
		n += e.delta
		u.Max = max(u.Max, n)
	}
	if wall := end.Sub(in.Start); wall > 0 {
		u.Mean = float64(area) / float64(wall)
	}
	u.AdmitToBindMs = quantiles(waits)
	return u
}

// gangCheck: at each pod's bind, every slot of its workload must hold a
// pod seen (created) by then and not ended, or one that succeeded; and,
// counted apart, admitted by then.
func gangCheck(in MeasureInput, ws []*workload) GangCheck {
	var g GangCheck
	for _, w := range ws {
		for _, pods := range w.slots {
			for _, p := range pods {
				if p.Bound.IsZero() {
					continue
				}
				slot, state := w.weakestSlotAt(p.Bound)
				at := ms(p.Bound.Sub(in.Start))
				switch state {
				case slotMissing:
					g.Violations++
					if len(g.Examples) < 5 {
						g.Examples = append(g.Examples, fmt.Sprintf("%s bound at %.0f ms while %s's member %d had no pod",
							p.Name, at, w.Key(), slot))
					}
				case slotGated:
					g.BoundBeforeGangAdmitted++
					if len(g.AdmittedExamples) < 5 {
						g.AdmittedExamples = append(g.AdmittedExamples, fmt.Sprintf("%s bound at %.0f ms while %s's member %d was still gated",
							p.Name, at, w.Key(), slot))
					}
				}
			}
		}
	}
	return g
}

// slotState is how far a member slot is at some moment.
type slotState int

const (
	slotMissing  slotState = iota // no live or Succeeded pod
	slotGated                     // a live pod, still gated
	slotAdmitted                  // a live admitted pod, or a Succeeded one
)

// weakestSlotAt returns the first slot in the lowest state at t and that
// state (-1 and slotAdmitted when every slot is admitted).
func (w *workload) weakestSlotAt(t time.Time) (int, slotState) {
	weakest, state := -1, slotAdmitted
	for slot, pods := range w.slots {
		if s := slotAt(pods, t); s < state {
			weakest, state = slot, s
		}
	}
	return weakest, state
}

// slotAt is the best state any of a slot's pods is in at t.
func slotAt(pods []*PodRecord, t time.Time) slotState {
	s := slotMissing
	for _, q := range pods {
		live := !q.Seen.IsZero() && !q.Seen.After(t) && (q.Ended.IsZero() || !q.Ended.Before(t))
		switch {
		case q.Succeeded && !q.Ended.After(t), live && !q.Admitted.IsZero() && !q.Admitted.After(t):
			return slotAdmitted
		case live:
			s = slotGated
		}
	}
	return s
}

func series(in MeasureInput, end time.Time) []Sample {
	var out []Sample
	for t := in.Start; !t.After(end); t = t.Add(time.Second) {
		s := Sample{T: ms(t.Sub(in.Start))}
		for _, p := range in.Pods {
			live := p.Ended.IsZero() || p.Ended.After(t)
			switch {
			case !live:
			case !p.Bound.IsZero() && !p.Bound.After(t):
				s.Bound += p.GPUs
				s.Admitted += p.GPUs
			case !p.Admitted.IsZero() && !p.Admitted.After(t):
				s.Admitted += p.GPUs
			case !p.Seen.IsZero() && !p.Seen.After(t):
				s.Waiting++
			}
		}
		out = append(out, s)
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func durationsMs(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = ms(d)
	}
	return out
}

// quantiles by nearest rank; zero for no values.
func quantiles(values []float64) Quantiles {
	if len(values) == 0 {
		return Quantiles{}
	}
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	sum := 0.0
	for _, v := range sorted {
		sum += v
	}
	rank := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(sorted)))) - 1
		return sorted[max(i, 0)]
	}
	return Quantiles{Count: len(sorted), Mean: sum / float64(len(sorted)), P50: rank(0.5), P90: rank(0.9), Max: sorted[len(sorted)-1]}
}
