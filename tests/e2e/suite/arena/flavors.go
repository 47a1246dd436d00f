package arena

import "slices"

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

// CompareFlavors compares the flavors a's and b's rounds (the same
// scenario) gave each workload.
func CompareFlavors(a, b Round) PlacementComparison { return comparePlacements(a, b, flavorsOf) }

func flavorsOf(m Measures) map[string][]string { return m.Flavors }
