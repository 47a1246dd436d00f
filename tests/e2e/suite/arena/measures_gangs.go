package arena

import (
	"slices"
	"sort"
	"time"
)

// GangMeasures say how whole gangs were placed (scenario 3), from the pods
// alone, the same for both arms. A gang is a workload of more than one
// pod; a slot is "bound" while its current pod (latest attempt) is on a
// node and not ended, or has succeeded.
type GangMeasures struct {
	// Gangs is the number of workloads with more than one pod.
	Gangs int `json:"gangs"`
	// BoundAfterCreatedMs per class (single-pod workloads too, for
	// comparison): the last member's first pod created -> the first moment
	// every slot is bound. Workloads never bound whole are not counted.
	BoundAfterCreatedMs map[string]Quantiles `json:"bound_after_created_ms"`
	// PartlyBoundS is gang-seconds partly bound: summed over gangs, the
	// time during which at least one member's current pod is bound (on a
	// node, running or succeeded) while another's is not (not created,
	// gated, pending, or failed and not yet replaced), up to the end of
	// the round. A real gang's bound members wait for the rest; the fake
	// kubelet runs each pod alone, so a member may even finish before the
	// last is bound, and still counts as bound here.
	PartlyBoundS        float64            `json:"partly_bound_s"`
	PartlyBoundByClassS map[string]float64 `json:"partly_bound_by_class_s"`
	// PartlyBoundHoldingS counts only the part of that time during which
	// a bound member still holds its GPUs (not yet ended): the GPU-time
	// idle in the arena, where members do not wait for each other.
	PartlyBoundHoldingS float64 `json:"partly_bound_holding_s"`
	// NeverCompleted gangs did not have every slot Succeeded by the end.
	NeverCompleted      int      `json:"never_completed"`
	NeverCompletedGangs []string `json:"never_completed_gangs,omitempty"`
}

// gangMeasures computes GangMeasures up to end (the round's end).
func gangMeasures(ws []*workload, end time.Time) GangMeasures {
	g := GangMeasures{PartlyBoundByClassS: map[string]float64{}}
	waits := map[string][]float64{}
	for _, w := range ws {
		if d, ok := w.boundAfterCreated(); ok {
			waits[w.Class] = append(waits[w.Class], ms(d))
		}
		if w.Pods < 2 {
			continue
		}
		g.Gangs++
		partly, holding := w.partlyBound(end)
		g.PartlyBoundS += partly.Seconds()
		g.PartlyBoundByClassS[w.Class] += partly.Seconds()
		g.PartlyBoundHoldingS += holding.Seconds()
		if w.reached(succeededAt).IsZero() {
			g.NeverCompleted++
			g.NeverCompletedGangs = append(g.NeverCompletedGangs, w.Key())
		}
	}
	g.BoundAfterCreatedMs = map[string]Quantiles{}
	for class, v := range waits {
		g.BoundAfterCreatedMs[class] = quantiles(v)
	}
	sort.Strings(g.NeverCompletedGangs)
	return g
}

// lastCreated is when the last slot's first pod appeared (zero if a slot
// never had one).
func (w *workload) lastCreated() time.Time { return w.reached(appeared) }

// boundAfterCreated is lastCreated -> the first moment every slot is
// bound at once (false if never).
func (w *workload) boundAfterCreated() (time.Duration, bool) {
	created := w.lastCreated()
	if created.IsZero() {
		return 0, false
	}
	times := w.eventTimes()
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	for _, t := range times {
		if !t.Before(created) && w.allBoundAt(t) {
			return t.Sub(created), true
		}
	}
	return 0, false
}

func (w *workload) allBoundAt(t time.Time) bool {
	for _, pods := range w.slots {
		if bound, _ := slotBoundAt(pods, t); !bound {
			return false
		}
	}
	return true
}

// partlyBoundAt: some slot is bound while another is not; holding, if
// moreover a bound slot's pod still holds its GPUs.
func (w *workload) partlyBoundAt(t time.Time) (partly, holding bool) {
	someBound, someUnbound := false, false
	for _, pods := range w.slots {
		bound, holds := slotBoundAt(pods, t)
		someBound = someBound || bound
		someUnbound = someUnbound || !bound
		holding = holding || holds
	}
	partly = someBound && someUnbound
	return partly, partly && holding
}

// partlyBound sums the time up to end during which the gang is partly
// bound, and the part of it during which a member holds GPUs. Its state
// changes only at its pods' events, so it is constant from one event to
// the next.
func (w *workload) partlyBound(end time.Time) (partly, holding time.Duration) {
	times := append(w.eventTimes(), end)
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	for i := 0; i+1 < len(times) && times[i].Before(end); i++ {
		next := times[i+1]
		if next.After(end) {
			next = end
		}
		p, h := w.partlyBoundAt(times[i])
		if p {
			partly += next.Sub(times[i])
		}
		if h {
			holding += next.Sub(times[i])
		}
	}
	return partly, holding
}
