package arena

import (
	"slices"
	"sort"
)

// PlacementComparison compares, workload by workload, where two arms'
// rounds placed the same scenario's workloads: the flavors (CompareFlavors)
// or the topology domains (CompareDomains) their pods ran on.
type PlacementComparison struct {
	Round int       `json:"round"`
	Arms  [2]string `json:"arms"`
	// Same counts the workloads both arms placed alike.
	Same int `json:"same"`
	// Differ lists the others, by workload name.
	Differ []PlacementDifference `json:"differ,omitempty"`
}

// PlacementDifference is one workload's placement in each arm (absent:
// it was never bound there).
type PlacementDifference struct {
	Workload string              `json:"workload"`
	Values   map[string][]string `json:"values"`
}

// comparePlacements compares what `of` reads from a's and b's measures.
func comparePlacements(a, b Round, of func(Measures) map[string][]string) PlacementComparison {
	c := PlacementComparison{Round: a.Round, Arms: [2]string{a.Arm, b.Arm}}
	pa, pb := of(a.Measures), of(b.Measures)
	names := map[string]bool{}
	for name := range pa {
		names[name] = true
	}
	for name := range pb {
		names[name] = true
	}
	sorted := make([]string, 0, len(names))
	for name := range names {
		sorted = append(sorted, name)
	}
	sort.Strings(sorted)
	for _, name := range sorted {
		if slices.Equal(pa[name], pb[name]) {
			c.Same++
			continue
		}
		c.Differ = append(c.Differ, PlacementDifference{Workload: name, Values: map[string][]string{a.Arm: pa[name], b.Arm: pb[name]}})
	}
	return c
}

// workloadDomains is, per workload, the values of the scenario's
// DomainLabel on the nodes its pods were bound on (every attempt), sorted,
// each once: one value when the workload ran in one domain. Nil when the
// scenario names no DomainLabel.
func workloadDomains(in MeasureInput, ws []*workload) map[string][]string {
	if in.DomainLabel == "" {
		return nil
	}
	out := map[string][]string{}
	for _, w := range ws {
		var domains []string
		for _, pods := range w.slots {
			for _, p := range pods {
				if d := in.NodeLabels[p.Node][in.DomainLabel]; p.Node != "" && !slices.Contains(domains, d) {
					domains = append(domains, d)
				}
			}
		}
		if len(domains) > 0 {
			sort.Strings(domains)
			out[w.Key()] = domains
		}
	}
	return out
}

// acrossDomains counts the workloads whose pods ran in more than one
// domain: what a required topology forbids.
func acrossDomains(domains map[string][]string) int {
	n := 0
	for _, d := range domains {
		if len(d) > 1 {
			n++
		}
	}
	return n
}

// CompareDomains compares the domains a's and b's rounds gave each
// workload.
func CompareDomains(a, b Round) PlacementComparison { return comparePlacements(a, b, domainsOf) }

func domainsOf(m Measures) map[string][]string { return m.Domains }

// firstPlacementComparison compares what `of` reads in the first round
// both arms ran where either measured it.
func firstPlacementComparison(rounds []Round, first, second string, of func(Measures) map[string][]string) *PlacementComparison {
	return firstComparison(rounds, first, second, func(a, b Round) bool {
		return len(of(a.Measures))+len(of(b.Measures)) > 0
	}, func(a, b Round) PlacementComparison { return comparePlacements(a, b, of) })
}
