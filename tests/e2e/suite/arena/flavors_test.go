package arena

import (
	"reflect"
	"testing"
	"time"
)

var twoFlavors = []FlavorLabels{
	{Name: "a100", Labels: map[string]string{"nvidia.com/gpu.product": "A100"}},
	{Name: "h100", Labels: map[string]string{"nvidia.com/gpu.product": "H100"}},
}

func TestFlavorOfNodeIsTheFirstWhoseLabelsItCarries(t *testing.T) {
	labels := map[string]string{"nvidia.com/gpu.product": "H100", "zone": "a"}
	if got := flavorOfNode(twoFlavors, labels); got != "h100" {
		t.Errorf("flavorOfNode = %q, want h100", got)
	}
	if got := flavorOfNode(twoFlavors, map[string]string{"zone": "a"}); got != "" {
		t.Errorf("flavorOfNode of an unlabelled node = %q, want \"\"", got)
	}
}

func TestWorkloadFlavorsListsEachFlavorInBindingOrder(t *testing.T) {
	start := time.Unix(0, 0)
	first := &PodRecord{Node: "n-h100", Bound: start.Add(2 * time.Second)}
	again := &PodRecord{Node: "n-a100", Bound: start.Add(9 * time.Second)}
	gated := &PodRecord{}
	in := MeasureInput{
		Policy: &PolicyInfo{Flavors: twoFlavors},
		NodeLabels: map[string]map[string]string{
			"n-a100": {"nvidia.com/gpu.product": "A100"},
			"n-h100": {"nvidia.com/gpu.product": "H100"},
		},
	}
	w := &workload{Arrival: Arrival{Queue: QueueRef{Namespace: "team-a"}, Name: "w"},
		slots: [][]*PodRecord{{again, first}, {gated}}}
	got := workloadFlavors(in, []*workload{w})
	want := map[string][]string{w.Key(): {"h100", "a100"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("workloadFlavors = %v, want %v", got, want)
	}
}

func TestWorkloadFlavorsIsNilWithOneFlavor(t *testing.T) {
	in := MeasureInput{Policy: &PolicyInfo{Flavors: twoFlavors[:1]}}
	if got := workloadFlavors(in, nil); got != nil {
		t.Errorf("workloadFlavors = %v, want nil", got)
	}
}

func TestCompareFlavorsCountsTheSameAndListsTheOthers(t *testing.T) {
	a := Round{Round: 1, Arm: "kueue", Measures: Measures{Flavors: map[string][]string{
		"x": {"a100"}, "y": {"h100"}, "z": {"a100"}}}}
	b := Round{Round: 1, Arm: "gpusched", Measures: Measures{Flavors: map[string][]string{
		"x": {"a100"}, "y": {"a100"}}}}
	c := CompareFlavors(a, b)
	if c.Same != 1 {
		t.Errorf("Same = %d, want 1 (x)", c.Same)
	}
	want := []PlacementDifference{
		{Workload: "y", Values: map[string][]string{"kueue": {"h100"}, "gpusched": {"a100"}}},
		{Workload: "z", Values: map[string][]string{"kueue": {"a100"}, "gpusched": nil}},
	}
	if !reflect.DeepEqual(c.Differ, want) {
		t.Errorf("Differ = %+v, want %+v", c.Differ, want)
	}
}

// Every node of the fungibility scenario belongs to one of its two flavors.
func TestFungibilityScenarioNodesEachHaveAFlavor(t *testing.T) {
	s := loadFixed(t, "fungibility")
	policy, err := ParsePolicy(s.Policy)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, labels := range NodeLabels(s) {
		counts[flavorOfNode(policy.Flavors, labels)]++
	}
	if want := map[string]int{"h100": 4, "a100": 4}; !reflect.DeepEqual(counts, want) {
		t.Errorf("nodes per flavor = %v, want %v", counts, want)
	}
}
