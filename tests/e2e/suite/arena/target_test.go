package arena

import "testing"

func TestTargetsAreJudgedOnTheMedians(t *testing.T) {
	medians := map[string]map[string]float64{
		"kueue":    {"wall_s": 90, "usage_min_pct": 9, "unplaceable": 4, "lost": 0},
		"gpusched": {"wall_s": 30, "usage_min_pct": 80, "unplaceable": 0, "lost": 1},
	}
	cases := []struct {
		figure, rule string
		met, missing bool
	}{
		{"wall_s", "ratio<=1.0", true, false},
		{"wall_s", "ratio>=1.0", false, false},
		{"usage_min_pct", "gpusched>=kueue+0", true, false},
		{"usage_min_pct", "gpusched>=kueue+75", false, false},
		{"unplaceable", "gpusched<=0", true, false},
		{"lost", "gpusched<=kueue+0", false, false},
		{"lost", "ratio<=1", false, false}, // kueue 0: only 0 is no worse
		{"absent", "ratio<=1", false, true},
	}
	for _, c := range cases {
		r := Target{Figure: c.figure, Rule: c.rule}.Judge(medians)
		if r.Met != c.met || r.Missing != c.missing {
			t.Errorf("%s %s: met %v missing %v, want %v %v (%+v)", c.figure, c.rule, r.Met, r.Missing, c.met, c.missing, r)
		}
	}
}

func TestTargetRulesThatAreRefused(t *testing.T) {
	for _, rule := range []string{"", "ratio<1", "ratio<=kueue+1", "kueue<=1", "gpusched==0", "ratio<=x"} {
		s := &Scenario{Targets: []Target{{Figure: "wall_s", Rule: rule}}}
		if err := s.checkTargets(); err == nil {
			t.Errorf("rule %q accepted", rule)
		}
	}
}
