package arena

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
)

// A Target is one goal of the issue for a scenario, on one figure of the
// report (Round.Figures), judged on the arms' medians:
//
//	ratio<=X           gpusched / kueue at most X (time: lower is better)
//	ratio>=X           gpusched / kueue at least X
//	gpusched<=kueue+X  gpusched at most kueue's plus X (X may be 0)
//	gpusched>=kueue+X  gpusched at least kueue's plus X (points, say)
//	gpusched<=X        gpusched at most X, kueue's reported beside it
type Target struct {
	Figure string `json:"figure"`
	Rule   string `json:"rule"`
}

// TargetResult is a Target judged.
type TargetResult struct {
	Target
	Kueue    float64 `json:"kueue"`
	Gpusched float64 `json:"gpusched"`
	Ratio    float64 `json:"ratio,omitempty"`
	Met      bool    `json:"met"`
	// Missing: a figure one arm's rounds did not have (none judged).
	Missing bool `json:"missing,omitempty"`
}

var targetRule = regexp.MustCompile(`^(ratio|gpusched)(<=|>=)(kueue\+)?([0-9.]+)$`)

func parseRule(rule string) (lhs, op string, vsKueue bool, x float64, err error) {
	m := targetRule.FindStringSubmatch(rule)
	if m == nil || (m[1] == "ratio" && m[3] != "") {
		return "", "", false, 0, fmt.Errorf("target rule %q: want ratio<=X, ratio>=X, gpusched<=X, gpusched<=kueue+X or gpusched>=kueue+X", rule)
	}
	x, err = strconv.ParseFloat(m[4], 64)
	return m[1], m[2], m[3] != "", x, err
}

func (s *Scenario) checkTargets() error {
	for _, t := range s.Targets {
		if t.Figure == "" {
			return fmt.Errorf("target %+v: no figure", t)
		}
		if _, _, _, _, err := parseRule(t.Rule); err != nil {
			return err
		}
	}
	return nil
}

// Judge compares the arms' medians by the target's rule.
func (t Target) Judge(medians map[string]map[string]float64) TargetResult {
	r := TargetResult{Target: t}
	k, kOK := medians["kueue"][t.Figure]
	g, gOK := medians["gpusched"][t.Figure]
	r.Kueue, r.Gpusched = k, g
	if !kOK || !gOK {
		r.Missing = true
		return r
	}
	if k != 0 {
		r.Ratio = g / k
	}
	lhs, op, vsKueue, x, _ := parseRule(t.Rule)
	left, right := g, x
	switch {
	case lhs == "ratio":
		if k == 0 {
			left, right = g, 0 // kueue 0: only gpusched 0 is no worse
		} else {
			left = r.Ratio
		}
	case vsKueue:
		right = k + x
	}
	const eps = 1e-9
	if op == "<=" {
		r.Met = left <= right+eps
	} else {
		r.Met = left >= right-eps
	}
	if math.IsNaN(left) {
		r.Met = false
	}
	return r
}
