package arena

import (
	"math"
	"testing"
	"time"
)

// measureFixture: one ClusterQueue "cq" (nominal 4 GPUs) reached from
// ns/lq; workload "g" is a gang of 2 arriving at 0, "s" a single pod
// arriving at 1 s.
func measureFixture() (MeasureInput, func(ms int) time.Time) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	q := QueueRef{Namespace: "ns", LocalQueue: "lq"}
	return MeasureInput{
		Policy: &PolicyInfo{ClusterQueues: []string{"cq"}, NominalGPUs: map[string]int64{"cq": 4},
			ClusterQueueOf: map[QueueRef]string{q: "cq"}},
		Arrivals: []Arrival{
			{At: 0, Queue: q, Class: "gang", Name: "g", Pods: 2},
			{At: time.Second, Queue: q, Class: "single", Name: "s", Pods: 1},
		},
		Start: start, End: at(10000),
	}, at
}

// pod is a record that was seen gated at seen, admitted, bound and
// ended (succeeded) at the given ms (-1: never).
func pod(at func(int) time.Time, workload string, member, seen, admitted, bound, ended int) PodRecord {
	t := func(ms int) time.Time {
		if ms < 0 {
			return time.Time{}
		}
		return at(ms)
	}
	return PodRecord{Namespace: "ns", Name: workload, Workload: "ns/" + workload, Queue: "lq", Member: member, GPUs: 1, Gated: true,
		Seen: t(seen), Admitted: t(admitted), Bound: t(bound), Ended: t(ended), Succeeded: ended >= 0}
}

func TestComputeMeasuresAGangAndASinglePod(t *testing.T) {
	in, at := measureFixture()
	in.Pods = []PodRecord{
		pod(at, "g", 0, 10, 1000, 1100, 3000),
		pod(at, "g", 1, 20, 1000, 1200, 3000),
		pod(at, "s", 0, 1010, 2000, 2500, 4000),
	}
	m := Compute(in)
	// The last finish is s at 4000 ms.
	if m.WallMs != 4000 || m.Complete != 2 {
		t.Fatalf("wall %v ms, %d complete; want 4000, 2", m.WallMs, m.Complete)
	}
	// g: arrival 0 -> both admitted at 1000; s: arrival 1000 -> 2000.
	if g := m.Classes["gang"].TimeToAdmissionMs.Mean; g != 1000 {
		t.Errorf("gang time to admission %v, want 1000", g)
	}
	if s := m.Classes["single"].TimeToAdmissionMs.Mean; s != 1000 {
		t.Errorf("single time to admission %v, want 1000", s)
	}
	// g running when its last member is bound (1200); s at 2500 - 1000.
	if g, s := m.Classes["gang"].TimeToRunningMs.Mean, m.Classes["single"].TimeToRunningMs.Mean; g != 1200 || s != 1500 {
		t.Errorf("time to running gang %v, single %v; want 1200, 1500", g, s)
	}
	// Held GPU-time: 2 x (3000 - 1000) + (4000 - 2000) = 6000 GPU-ms of
	// 4 GPUs x 4000 ms = 37.5 %.
	if math.Abs(m.Usage.AllPct-37.5) > 1e-9 || m.Usage.MinQueue != "cq" || m.Usage.MinPct != m.Usage.AllPct {
		t.Errorf("usage %+v, want 37.5 %% for cq", m.Usage)
	}
	// Admitted and unbound: g's two from 1000 to 1100/1200 (2 at once),
	// s from 2000 to 2500.
	if u := m.AdmittedUnbound; u.Max != 2 || u.NeverBound != 0 || u.AdmitToBindMs.Max != 500 {
		t.Errorf("admitted-unbound %+v, want max 2, none never bound, slowest 500 ms", u)
	}
	if m.Gangs.Violations != 0 {
		t.Errorf("gang violations %v", m.Gangs)
	}
}

func TestComputeCountsAMemberBoundBeforeItsGangExists(t *testing.T) {
	in, at := measureFixture()
	in.Pods = []PodRecord{
		// Member 0 bound at 500 ms; member 1 only created at 800 ms.
		pod(at, "g", 0, 10, 100, 500, 3000),
		pod(at, "g", 1, 800, 900, 1000, 3000),
		pod(at, "s", 0, 1010, 2000, 2500, 4000),
	}
	if g := Compute(in).Gangs; g.Violations != 1 || len(g.Examples) != 1 || g.BoundBeforeGangAdmitted != 0 {
		t.Fatalf("gang check %+v, want 1 violation (g-m0 at 500 ms)", g)
	}
}

func TestComputeCountsAMemberBoundWhileAnotherIsGatedApart(t *testing.T) {
	in, at := measureFixture()
	in.Pods = []PodRecord{
		// Both exist from 20 ms; member 0 ungated at 100 and bound at 500,
		// member 1 ungated only at 900.
		pod(at, "g", 0, 10, 100, 500, 3000),
		pod(at, "g", 1, 20, 900, 1000, 3000),
		pod(at, "s", 0, 1010, 2000, 2500, 4000),
	}
	if g := Compute(in).Gangs; g.Violations != 0 || g.BoundBeforeGangAdmitted != 1 || len(g.AdmittedExamples) != 1 {
		t.Fatalf("gang check %+v, want no violation and g-m0 bound before its gang was admitted", g)
	}
}

func TestComputeAReplacedMemberCountsItsFirstAdmission(t *testing.T) {
	in, at := measureFixture()
	failed := pod(at, "g", 1, 20, 1000, 1200, 1500)
	failed.Succeeded = false
	replacement := pod(at, "g", 1, 1600, 2000, 2100, 3500)
	replacement.Name, replacement.Attempt = "g-r1", 1
	in.Pods = []PodRecord{pod(at, "g", 0, 10, 1000, 1100, 3000), failed, replacement, pod(at, "s", 0, 1010, 2000, 2500, 4000)}
	in.Replacements = 1
	m := Compute(in)
	if c := m.Classes["gang"]; c.TimeToAdmissionMs.Mean != 1000 || c.Evicted != 1 || c.Complete != 1 {
		t.Errorf("gang class %+v, want admitted at 1000, 1 evicted, complete", c)
	}
	if m.FailedPods != 1 || m.Replacements != 1 {
		t.Errorf("failed %d, replacements %d; want 1, 1", m.FailedPods, m.Replacements)
	}
}

func TestComputeWithoutAFinishRunsToTheEnd(t *testing.T) {
	in, at := measureFixture()
	in.Pods = []PodRecord{pod(at, "g", 0, 10, 1000, 1100, 3000), pod(at, "g", 1, 20, -1, -1, -1)}
	m := Compute(in)
	if m.WallMs != 10000 || m.Complete != 0 {
		t.Fatalf("wall %v, complete %d; want the round's end (10000) and none", m.WallMs, m.Complete)
	}
	if m.Classes["gang"].TimeToAdmissionMs.Count != 0 {
		t.Errorf("g was never admitted whole: %+v", m.Classes["gang"])
	}
}

func TestReportTakesMediansAndRatios(t *testing.T) {
	s := &Scenario{Name: "x"}
	rounds := []Round{
		{Arm: "kueue", Round: 1, Measures: Measures{WallMs: 10000}},
		{Arm: "gpusched", Round: 1, Measures: Measures{WallMs: 6000}},
		{Arm: "kueue", Round: 2, Measures: Measures{WallMs: 12000}},
		{Arm: "gpusched", Round: 2, Measures: Measures{WallMs: 5000}},
		{Arm: "kueue", Round: 3, Measures: Measures{WallMs: 20000}},
		{Arm: "gpusched", Round: 3, Measures: Measures{WallMs: 7000}},
	}
	r := NewReport(s, "x.yaml", rounds)
	// Medians 12 s and 6 s: 6 / 12 = 0.5.
	if r.Medians["kueue"]["wall_s"] != 12 || r.Medians["gpusched"]["wall_s"] != 6 || r.Ratios["wall_s"] != 0.5 {
		t.Fatalf("medians %v / %v, ratio %v", r.Medians["kueue"]["wall_s"], r.Medians["gpusched"]["wall_s"], r.Ratios["wall_s"])
	}
	if r.Rounds != 3 || len(r.Runs) != 6 {
		t.Errorf("%d rounds, %d runs; want 3, 6", r.Rounds, len(r.Runs))
	}
}
