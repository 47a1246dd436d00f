package arena

import (
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// PolicyInfo is what the arena reads of a scenario's policy to measure a
// round: which ClusterQueue each LocalQueue reaches and each
// ClusterQueue's nominal GPU quota.
type PolicyInfo struct {
	// ClusterQueues in the order the policy lists them.
	ClusterQueues []string
	// NominalGPUs is each ClusterQueue's nominal nvidia.com/gpu quota,
	// summed over its flavors.
	NominalGPUs    map[string]int64
	ClusterQueueOf map[QueueRef]string
	// PriorityClasses are the WorkloadPriorityClasses' values.
	PriorityClasses map[string]int64
	// Flavors are the ResourceFlavors in the order the policy lists them,
	// with their nodeLabels (flavorOfNode).
	Flavors []FlavorLabels
}

// FlavorLabels is a ResourceFlavor's name and spec.nodeLabels.
type FlavorLabels struct {
	Name   string
	Labels map[string]string
}

// ParsePolicy reads Kueue objects (any served version).
func ParsePolicy(policy string) (*PolicyInfo, error) {
	objs, err := controlplane.DecodeObjects(strings.NewReader(policy))
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	p := &PolicyInfo{NominalGPUs: map[string]int64{}, ClusterQueueOf: map[QueueRef]string{}, PriorityClasses: map[string]int64{}}
	for _, obj := range objs {
		if isKueueConfiguration(obj) {
			continue
		}
		if group := obj.GroupVersionKind().Group; group != KueueGroup {
			return nil, fmt.Errorf("policy: %s %s is in group %q, not %s", obj.GetKind(), objectName(obj), group, KueueGroup)
		}
		if err := p.add(obj); err != nil {
			return nil, fmt.Errorf("policy: %s %s: %w", obj.GetKind(), objectName(obj), err)
		}
	}
	for ref, cq := range p.ClusterQueueOf {
		if _, ok := p.NominalGPUs[cq]; !ok {
			return nil, fmt.Errorf("policy: LocalQueue %s/%s points to ClusterQueue %q, which it lacks", ref.Namespace, ref.LocalQueue, cq)
		}
	}
	return p, nil
}

func (p *PolicyInfo) add(obj *unstructured.Unstructured) error {
	switch obj.GetKind() {
	case "ClusterQueue":
		gpus, err := nominalGPUs(obj)
		if err != nil {
			return err
		}
		p.ClusterQueues = append(p.ClusterQueues, obj.GetName())
		p.NominalGPUs[obj.GetName()] = gpus
	case "LocalQueue":
		cq, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterQueue")
		if cq == "" {
			return fmt.Errorf("no spec.clusterQueue")
		}
		p.ClusterQueueOf[QueueRef{Namespace: obj.GetNamespace(), LocalQueue: obj.GetName()}] = cq
	case "ResourceFlavor":
		labels, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "nodeLabels")
		p.Flavors = append(p.Flavors, FlavorLabels{Name: obj.GetName(), Labels: labels})
	case "WorkloadPriorityClass":
		value, err := integer(obj.Object["value"])
		if err != nil {
			return err
		}
		p.PriorityClasses[obj.GetName()] = value
	}
	return nil
}

// nominalGPUs sums nominalQuota of nvidia.com/gpu over every flavor of
// every resource group.
func nominalGPUs(cq *unstructured.Unstructured) (int64, error) {
	groups, _, _ := unstructured.NestedSlice(cq.Object, "spec", "resourceGroups")
	var total int64
	for _, g := range groups {
		flavors, _, _ := unstructured.NestedSlice(asMap(g), "flavors")
		for _, f := range flavors {
			resources, _, _ := unstructured.NestedSlice(asMap(f), "resources")
			for _, r := range resources {
				m := asMap(r)
				if m["name"] != cluster.GpuResource {
					continue
				}
				q, err := resource.ParseQuantity(fmt.Sprint(m["nominalQuota"]))
				if err != nil {
					return 0, fmt.Errorf("nominalQuota %v: %w", m["nominalQuota"], err)
				}
				total += q.Value()
			}
		}
	}
	return total, nil
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// integer is a decoded YAML number (float64 from JSON, int64 otherwise).
func integer(v any) (int64, error) {
	switch n := v.(type) {
	case int64:
		return n, nil
	case float64:
		if n == math.Trunc(n) {
			return int64(n), nil
		}
	}
	return 0, fmt.Errorf("value %v: want an integer", v)
}
