package main

import (
	"fmt"
	"strings"

	"gpusched.io/e2e/suite/arena"
)

// printAdmissionOrder prints the report's admission-order comparison: at
// each point, how many workloads both arms had admitted and which only
// one had (the first few names).
func printAdmissionOrder(r arena.Report) {
	c := r.AdmissionOrder
	if c == nil {
		return
	}
	fmt.Printf("admission order, round %d (%s vs %s): %d and %d of %d admitted; %d in common, longest common order %d, Kendall tau %.2f\n",
		c.Round, c.Arms[0], c.Arms[1], c.Admitted[c.Arms[0]], c.Admitted[c.Arms[1]], c.Workloads,
		c.Common, c.LongestCommonOrder, c.KendallTau)
	for _, p := range c.Points {
		fmt.Printf("  first %3.0f %% (%d): both %d; only %s %d %s; only %s %d %s\n", 100*p.Share, p.Admissions, p.Both,
			c.Arms[0], len(p.Only[c.Arms[0]]), firstNames(p.Only[c.Arms[0]]),
			c.Arms[1], len(p.Only[c.Arms[1]]), firstNames(p.Only[c.Arms[1]]))
	}
}

func firstNames(names []string) string {
	if len(names) > 5 {
		return "[" + strings.Join(names[:5], " ") + " ...]"
	}
	return "[" + strings.Join(names, " ") + "]"
}
