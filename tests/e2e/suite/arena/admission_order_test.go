package arena

import (
	"math"
	"reflect"
	"testing"
)

func TestAdmissionOrderTakesTheFirstMomentEveryCurrentMemberIsUngated(t *testing.T) {
	in, at := gangFixture()
	in.Arrivals[0].Pods = 2
	in.Pods = []PodRecord{
		// g: member 0 ungated at 300, member 1's first pod ungated at 200
		// but failed at 250 and its replacement ungated only at 900: g is
		// admitted at 900, not at 300.
		member(at, "g", 0, 0, 100, 300, 400, 5000, true),
		member(at, "g", 1, 0, 100, 200, -1, 250, false),
		member(at, "g", 1, 1, 260, 900, 1000, 5000, true),
		member(at, "s", 0, 0, 50, 600, 700, 3000, true),
	}
	got := Compute(in).AdmissionOrder
	want := []Admission{{Workload: "ns/s", AtMs: 600}, {Workload: "ns/g", AtMs: 900}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("admission order %+v, want %+v", got, want)
	}
}

// ordered is a Round of arm whose workloads were admitted in this order,
// one per second, out of workloads.
func ordered(arm string, workloads int, names ...string) Round {
	r := Round{Arm: arm, Round: 1, Measures: Measures{Workloads: workloads}}
	for i, n := range names {
		r.Measures.AdmissionOrder = append(r.Measures.AdmissionOrder, Admission{Workload: n, AtMs: float64(1000 * (i + 1))})
	}
	return r
}

func TestCompareAdmissionOrderListsWhatOnlyOneArmAdmittedAtEachPoint(t *testing.T) {
	kueue := ordered("kueue", 4, "a", "b", "c", "d")
	gpusched := ordered("gpusched", 4, "c", "a", "b")
	c := CompareAdmissionOrder(kueue, gpusched)
	// 25 %: kueue a, gpusched c.
	p := c.Points[0]
	if p.Admissions != 1 || p.Both != 0 || !reflect.DeepEqual(p.Only["kueue"], []string{"a"}) || !reflect.DeepEqual(p.Only["gpusched"], []string{"c"}) {
		t.Errorf("25 %% point %+v", p)
	}
	// 50 %: {a, b} against {c, a}.
	if p = c.Points[1]; p.Both != 1 || !reflect.DeepEqual(p.Only["kueue"], []string{"b"}) || p.AtMs["gpusched"] != 2000 {
		t.Errorf("50 %% point %+v", p)
	}
	// 100 %: gpusched admitted 3 of 4, and has no time for the 4th.
	if p = c.Points[3]; p.Both != 3 || !reflect.DeepEqual(p.Only["kueue"], []string{"d"}) || len(p.Only["gpusched"]) != 0 {
		t.Errorf("100 %% point %+v", p)
	}
	if _, ok := p.AtMs["gpusched"]; ok || p.AtMs["kueue"] != 4000 {
		t.Errorf("100 %% times %v, want kueue's only", p.AtMs)
	}
	// Common a, b, c: kueue ranks 0 1 2, gpusched 1 2 0: a-b agree, a-c and
	// b-c disagree; the longest shared order is a, b.
	if c.Common != 3 || c.LongestCommonOrder != 2 || math.Abs(c.KendallTau-(-1.0/3)) > 1e-12 {
		t.Errorf("common %d, longest common order %d, tau %v; want 3, 2, -1/3", c.Common, c.LongestCommonOrder, c.KendallTau)
	}
}

func TestReportComparesTheFirstRoundBothArmsRan(t *testing.T) {
	rounds := []Round{ordered("kueue", 2, "a", "b"), ordered("gpusched", 2, "a", "b")}
	second := ordered("gpusched", 2, "b", "a")
	second.Round = 2
	r := NewReport(&Scenario{Name: "x"}, "x.yaml", append(rounds, second))
	if c := r.AdmissionOrder; c == nil || c.Round != 1 || c.KendallTau != 1 || c.LongestCommonOrder != 2 {
		t.Fatalf("admission order %+v, want round 1's, the same order", c)
	}
	if r := NewReport(&Scenario{Name: "x"}, "x.yaml", rounds[:1]); r.AdmissionOrder != nil {
		t.Errorf("one arm only: %+v, want none", r.AdmissionOrder)
	}
}
