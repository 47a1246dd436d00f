package arena

import (
	"slices"
	"sort"
)

// workloadFlavors is, per workload, the ResourceFlavors its pods were
// bound on, in the order of their binding (more than one when it was
// preempted and admitted again elsewhere). A node's flavor is the first
// of the policy's flavors whose nodeLabels it carries. Nil when the policy
// has fewer than two flavors: there is no choice to compare.
func workloadFlavors(in MeasureInput, ws []*workload) map[string][]string {
	if in.Policy == nil || len(in.Policy.Flavors) < 2 {
		return nil
	}
	out := map[string][]string{}
	for _, w := range ws {
		var bound []*PodRecord
		for _, pods := range w.slots {
			for _, p := range pods {
				if p.Node != "" {
					bound = append(bound, p)
				}
			}
		}
		slices.SortStableFunc(bound, func(a, b *PodRecord) int { return a.Bound.Compare(b.Bound) })
		var flavors []string
		for _, p := range bound {
			f := flavorOfNode(in.Policy.Flavors, in.NodeLabels[p.Node])
			if len(flavors) == 0 || flavors[len(flavors)-1] != f {
				flavors = append(flavors, f)
			}
		}
		if len(flavors) > 0 {
			out[w.Key()] = flavors
		}
	}
	return out
}

// flavorOfNode is the first flavor whose every nodeLabel the node has, or
// "" when none matches.
func flavorOfNode(flavors []FlavorLabels, labels map[string]string) string {
	for _, f := range flavors {
		matches := true
		for k, v := range f.Labels {
			matches = matches && labels[k] == v
		}
		if matches {
			return f.Name
		}
	}
	return ""
}

// FlavorComparison compares the flavors two arms' rounds gave each
// workload.
type FlavorComparison struct {
	Round int       `json:"round"`
	Arms  [2]string `json:"arms"`
	// Same counts the workloads both arms ran on the same flavors.
	Same int `json:"same"`
	// Differ lists the others, by workload name.
	Differ []FlavorDifference `json:"differ,omitempty"`
}

// FlavorDifference is one workload's flavors in each arm (absent: it was
// never bound there).
type FlavorDifference struct {
	Workload string              `json:"workload"`
	Flavors  map[string][]string `json:"flavors"`
}

// CompareFlavors compares a's and b's rounds (the same scenario).
func CompareFlavors(a, b Round) FlavorComparison {
	c := FlavorComparison{Round: a.Round, Arms: [2]string{a.Arm, b.Arm}}
	names := map[string]bool{}
	for name := range a.Measures.Flavors {
		names[name] = true
	}
	for name := range b.Measures.Flavors {
		names[name] = true
	}
	sorted := make([]string, 0, len(names))
	for name := range names {
		sorted = append(sorted, name)
	}
	sort.Strings(sorted)
	for _, name := range sorted {
		fa, fb := a.Measures.Flavors[name], b.Measures.Flavors[name]
		if slices.Equal(fa, fb) {
			c.Same++
			continue
		}
		c.Differ = append(c.Differ, FlavorDifference{Workload: name, Flavors: map[string][]string{a.Arm: fa, b.Arm: fb}})
	}
	return c
}

func firstFlavorComparison(rounds []Round, first, second string) *FlavorComparison {
	return firstComparison(rounds, first, second, func(a, b Round) bool {
		return len(a.Measures.Flavors)+len(b.Measures.Flavors) > 0
	}, CompareFlavors)
}
