package arena

import (
	"math"
	"testing"
	"time"
)

// traceFixture: the measure fixture on a 4-GPU cluster; g's member 0 is
// created at 0 (its member 1 at 20), s at 1000.
func traceFixture() (MeasureInput, func(int) time.Time) {
	in, at := measureFixture()
	in.ClusterGPUs = 4
	return in, at
}

func TestTraceMeasuresAllocationAndTaskWait(t *testing.T) {
	in, at := traceFixture()
	in.Pods = []PodRecord{
		pod(at, "g", 0, 10, 1000, 1100, 3000),
		pod(at, "g", 1, 20, 1000, 1200, 3000),
		pod(at, "s", 0, 1010, 2000, 2500, 4000),
	}
	in.Pods[0].Created = at(0)
	m := Compute(in).Trace
	// Samples at 0, 1, 2, 3, 4 s: bound GPUs 0, 0, 2, 1, 0 of 4.
	if want := 100 * 3.0 / 4 / 5; math.Abs(m.AllocationWallPct-want) > 1e-9 || m.AllocationPeakPct != 50 {
		t.Errorf("allocation over the wall %v %%, peak %v %%; want %v, 50", m.AllocationWallPct, m.AllocationPeakPct, want)
	}
	// The arrival window is 0..1000 ms: samples at 0 and 1 s, none bound.
	if m.AllocationArrivalsPct != 0 {
		t.Errorf("allocation over the arrivals %v %%, want 0", m.AllocationArrivalsPct)
	}
	// g: created at 0 (the create call), bound whole at 1200; s: seen at
	// 1010, bound at 2500.
	if w := m.TaskWaitMs; w.Count != 2 || w.P50 != 1200 || w.P90 != 1490 || m.TasksNeverBound != 0 {
		t.Errorf("task wait %+v (never bound %d), want p50 1200, p90 1490", w, m.TasksNeverBound)
	}
	if m.Unplaceable != 0 {
		t.Errorf("unplaceable %d, want none (no pod marked Unschedulable)", m.Unplaceable)
	}
}

func TestTraceMeasuresCountPodsAdmittedButUnplaceable(t *testing.T) {
	in, at := traceFixture()
	in.Pods = []PodRecord{
		// Admitted at 1000, Unschedulable at 1050, bound at 3500: 2.5 s held.
		pod(at, "g", 0, 10, 1000, 3500, 5000),
		// Unschedulable for a moment only: bound 1.5 s after admission.
		pod(at, "g", 1, 20, 1000, 2500, 5000),
		// Never bound: held to the round's end (10 s, the wall's end too).
		pod(at, "s", 0, 1010, 2000, -1, -1),
	}
	in.Pods[0].Unschedulable = at(1050)
	in.Pods[1].Unschedulable = at(1100)
	in.Pods[2].Unschedulable, in.Pods[2].GPUs = at(2100), 2
	m := Compute(in).Trace
	wantHours := (2.5 + 2*8.0) / 3600
	if m.Unplaceable != 2 || math.Abs(m.UnplaceableGPUHours-wantHours) > 1e-12 || len(m.UnplaceableExamples) != 2 {
		t.Errorf("unplaceable %d, %v GPU-hours (%v); want 2, %v", m.Unplaceable, m.UnplaceableGPUHours, m.UnplaceableExamples, wantHours)
	}
	if m.TasksNeverBound != 1 {
		t.Errorf("tasks never bound %d, want 1", m.TasksNeverBound)
	}
}

func TestTraceMeasuresIgnoreUnschedulableBeforeAdmission(t *testing.T) {
	in, at := traceFixture()
	in.Pods = []PodRecord{pod(at, "s", 0, 1010, 5000, 9000, 9500)}
	in.Pods[0].Unschedulable = at(1500) // while gated: not quota held
	if m := Compute(in).Trace; m.Unplaceable != 0 {
		t.Errorf("unplaceable %d, want 0: the pod was not admitted yet", m.Unplaceable)
	}
}

func TestTraceFiguresReachTheReport(t *testing.T) {
	r := Round{Arm: "kueue", Measures: Measures{Trace: TraceMeasures{Unplaceable: 3, AllocationArrivalsPct: 71}}}
	f := r.Figures()
	if f["unplaceable_pods"] != 3 || f["allocation_arrivals_pct"] != 71 {
		t.Errorf("figures %v lack the trace measures", f)
	}
	for k := range traceDefinitions {
		if Definitions[k] == "" {
			t.Errorf("no definition for %s", k)
		}
	}
}
