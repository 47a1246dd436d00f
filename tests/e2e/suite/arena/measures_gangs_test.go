package arena

import (
	"math"
	"testing"
	"time"
)

// gangFixture: one ClusterQueue reached from ns/lq; workload "g" is a gang
// of 4 arriving at 0, "s" a single pod arriving at 0.
func gangFixture() (MeasureInput, func(ms int) time.Time) {
	in, at := measureFixture()
	q := in.Arrivals[0].Queue
	in.Arrivals = []Arrival{
		{At: 0, Queue: q, Class: "gang", Name: "g", Pods: 4, PodGPUs: 8},
		{At: 0, Queue: q, Class: "single", Name: "s", Pods: 1},
	}
	return in, at
}

// member is pod(...) with a name of its own and created = seen.
func member(at func(int) time.Time, workload string, slot, attempt, seen, admitted, bound, ended int, succeeded bool) PodRecord {
	p := pod(at, workload, slot, seen, admitted, bound, ended)
	p.Name = (Arrival{Name: workload}).PodName(slot, attempt)
	p.Attempt, p.Created, p.Succeeded = attempt, p.Seen, succeeded && ended >= 0
	if !p.Bound.IsZero() {
		p.Running = p.Bound
	}
	return p
}

func TestGangMeasuresTimeToBoundFromTheLastMemberCreated(t *testing.T) {
	in, at := gangFixture()
	in.Pods = []PodRecord{
		// Created 100..400 ms, all bound by 1400 ms: 1000 ms after the last.
		member(at, "g", 0, 0, 100, 500, 600, 5000, true),
		member(at, "g", 1, 0, 200, 500, 700, 5000, true),
		member(at, "g", 2, 0, 300, 500, 1400, 5000, true),
		member(at, "g", 3, 0, 400, 500, 800, 5000, true),
		member(at, "s", 0, 0, 50, 60, 250, 3000, true),
	}
	g := Compute(in).GangPlacement
	if q := g.BoundAfterCreatedMs["gang"]; q.Count != 1 || q.P90 != 1000 {
		t.Errorf("gang bound after created %+v, want one of 1000 ms", q)
	}
	if q := g.BoundAfterCreatedMs["single"]; q.Count != 1 || q.P50 != 200 {
		t.Errorf("single bound after created %+v, want one of 200 ms", q)
	}
	// Members 0, 3, 1 hold nodes from 600 ms while member 2 waits until
	// 1400 ms: 0.8 gang-seconds. The single pod is never partly bound.
	if g.Gangs != 1 || math.Abs(g.PartlyBoundS-0.8) > 1e-9 || g.NeverCompleted != 0 {
		t.Errorf("gangs %d, partly bound %v s, never completed %d; want 1, 0.8, 0", g.Gangs, g.PartlyBoundS, g.NeverCompleted)
	}
}

func TestGangMeasuresAStuckGangIsPartlyBoundToTheEndAndNeverCompletes(t *testing.T) {
	in, at := gangFixture()
	in.Pods = []PodRecord{
		// Two members bound at 1000 and 2000 ms, two never: the round ends
		// at 10000 ms.
		member(at, "g", 0, 0, 100, 500, 1000, -1, false),
		member(at, "g", 1, 0, 100, 500, 2000, -1, false),
		member(at, "g", 2, 0, 100, 500, -1, -1, false),
		member(at, "g", 3, 0, 100, 500, -1, -1, false),
		member(at, "s", 0, 0, 50, 60, 250, 3000, true),
	}
	g := Compute(in).GangPlacement
	if math.Abs(g.PartlyBoundS-9) > 1e-9 || g.NeverCompleted != 1 || len(g.NeverCompletedGangs) != 1 || g.NeverCompletedGangs[0] != "ns/g" {
		t.Errorf("partly bound %v s, never completed %v; want 9 s and ns/g", g.PartlyBoundS, g.NeverCompletedGangs)
	}
	if q := g.BoundAfterCreatedMs["gang"]; q.Count != 0 {
		t.Errorf("a gang never bound whole has no time to bound: %+v", q)
	}
}

func TestGangMeasuresAnEvictedMemberMakesTheGangPartlyBoundUntilItsReplacementBinds(t *testing.T) {
	in, at := gangFixture()
	in.Pods = []PodRecord{
		// All bound at 1000 ms; member 3 evicted at 2000 ms, replaced at
		// 2100 ms and bound again at 2600 ms: partly bound 2000 -> 2600.
		member(at, "g", 0, 0, 100, 500, 1000, 6000, true),
		member(at, "g", 1, 0, 100, 500, 1000, 6000, true),
		member(at, "g", 2, 0, 100, 500, 1000, 6000, true),
		member(at, "g", 3, 0, 100, 500, 1000, 2000, false),
		member(at, "g", 3, 1, 2100, 2200, 2600, 7000, true),
		member(at, "s", 0, 0, 50, 60, 250, 3000, true),
	}
	g := Compute(in).GangPlacement
	if math.Abs(g.PartlyBoundS-0.6) > 1e-9 || g.NeverCompleted != 0 {
		t.Errorf("partly bound %v s, never completed %d; want 0.6 s, 0", g.PartlyBoundS, g.NeverCompleted)
	}
	// Members that succeeded hold nothing: after 6000 ms member 3 still
	// runs alone, which is not partly bound.
	if q := g.BoundAfterCreatedMs["gang"]; q.P50 != 900 {
		t.Errorf("gang bound after created %+v, want 900 ms (first whole at 1000)", q)
	}
}

func TestGangMeasuresAMemberThatFinishedBeforeTheLastBoundStillCountsAsBound(t *testing.T) {
	in, at := gangFixture()
	in.Pods = []PodRecord{
		// Kueue's arm, where the fake kubelet runs each pod alone: member 0
		// runs 1000 -> 3000 ms, the others bind at 4000, 5000 and 6000 ms.
		member(at, "g", 0, 0, 100, 500, 1000, 3000, true),
		member(at, "g", 1, 0, 100, 500, 4000, 7000, true),
		member(at, "g", 2, 0, 100, 500, 5000, 8000, true),
		member(at, "g", 3, 0, 100, 500, 6000, 9000, true),
		member(at, "s", 0, 0, 50, 60, 250, 3000, true),
	}
	g := Compute(in).GangPlacement
	// Partly bound 1000 -> 6000 ms; a member holds GPUs 1000 -> 3000 and
	// 4000 -> 6000 ms.
	if math.Abs(g.PartlyBoundS-5) > 1e-9 || math.Abs(g.PartlyBoundHoldingS-4) > 1e-9 {
		t.Errorf("partly bound %v s, holding %v s; want 5, 4", g.PartlyBoundS, g.PartlyBoundHoldingS)
	}
	if q := g.BoundAfterCreatedMs["gang"]; q.P50 != 5900 {
		t.Errorf("gang bound after created %+v, want 5900 ms", q)
	}
}
