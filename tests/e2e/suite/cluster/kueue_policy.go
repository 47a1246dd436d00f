package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// KueuePolicy builds gpusched's --policy file: Kueue's ResourceFlavor for
// the H100 nodes every test and benchmark cluster holds (the demo cluster's
// and their generated copies), its ClusterQueues and the LocalQueues that
// reach them, and optionally gpusched's own SchedulerConfig. The tests say
// which queues they need; the YAML is written in one place.
type KueuePolicy struct {
	Queues []ClusterQueue
	// Flavors are ResourceFlavors besides H100Flavor, by name: the node
	// labels that select their nodes.
	Flavors map[string]map[string]string
	// SchedulerConfig is written only when set.
	SchedulerConfig *SchedulerConfig
}

// QueueLabel names a pod's LocalQueue.
const QueueLabel = "kueue.x-k8s.io/queue-name"

// H100Flavor is the ResourceFlavor every ClusterQueue's quota is in.
const H100Flavor = "h100"

// h100Product is the GFD label value of the demo cluster's H100 nodes.
const h100Product = "NVIDIA-H100-80GB-HBM3"

// ClusterQueue is one Kueue ClusterQueue covering nvidia.com/gpu and cpu
// (as in Kueue, a pod is admitted only if its queue covers every resource
// it requests, and the suite's pods request cpu too).
type ClusterQueue struct {
	Name string
	// Cohort is the cohort it borrows in and lends to ("": none, so its
	// quota is a hard bound).
	Cohort string
	// GPUs and CPUs are its nominal quotas (cpu in cores).
	GPUs, CPUs int
	// Flavor is the ResourceFlavor its quotas are in ("": H100Flavor).
	Flavor string
	// Extra are the nominal quotas of further resources it covers, by
	// name (nvidia.com/mig-1g.10gb: 3), in the same flavor.
	Extra map[string]int
	// StrictFIFO sets queueingStrategy StrictFIFO (default BestEffortFIFO).
	StrictFIFO bool
	// Preemption is spec.preemption, e.g. {"withinClusterQueue":
	// "LowerPriority"} or {"reclaimWithinCohort": "Any"}.
	Preemption map[string]string
	// LocalQueues reach the ClusterQueue from their namespaces.
	LocalQueues []LocalQueue
}

// LocalQueue is a namespaced Kueue LocalQueue; pods name it in their
// kueue.x-k8s.io/queue-name label.
type LocalQueue struct {
	Namespace, Name string
}

// SchedulerConfig is gpusched's own policy object.
type SchedulerConfig struct {
	Name string
	// Gang is spec.gang (admissionTimeout, staleGangGracePeriod,
	// backoffBase, backoffMax), durations as Go or Kubernetes text ("60s").
	Gang map[string]string
	// DeviceClassMappings is spec.resources.deviceClassMappings (Kueue's
	// Configuration field): quota resource name -> the DeviceClasses whose
	// claimed devices count as it.
	DeviceClassMappings map[string][]string
}

// ResearchQueues are ClusterQueues of `quotas` (name -> nominal GPUs, 64
// cpu each) in cohort research, each reached from namespace by a
// LocalQueue of its own name: the queues most tests use.
func ResearchQueues(namespace string, quotas map[string]int) []ClusterQueue {
	var queues []ClusterQueue
	for _, name := range SortedKeys(quotas) {
		queues = append(queues, ClusterQueue{Name: name, Cohort: "research", GPUs: quotas[name], CPUs: 64,
			LocalQueues: []LocalQueue{{Namespace: namespace, Name: name}}})
	}
	return queues
}

// YAML is the policy as a multi-document YAML stream.
func (p KueuePolicy) YAML() (string, error) {
	docs := []map[string]any{kueueObject("ResourceFlavor", H100Flavor, "", map[string]any{
		"nodeLabels": map[string]string{"nvidia.com/gpu.product": h100Product}})}
	for _, name := range SortedKeys(p.Flavors) {
		docs = append(docs, kueueObject("ResourceFlavor", name, "", map[string]any{"nodeLabels": p.Flavors[name]}))
	}
	if c := p.SchedulerConfig; c != nil {
		docs = append(docs, map[string]any{"apiVersion": "gpusched.io/v1alpha1", "kind": "SchedulerConfig",
			"metadata": map[string]any{"name": c.Name}, "spec": c.spec()})
	}
	for _, q := range p.Queues {
		docs = append(docs, kueueObject("ClusterQueue", q.Name, "", q.spec()))
		for _, lq := range q.LocalQueues {
			docs = append(docs, kueueObject("LocalQueue", lq.Name, lq.Namespace, map[string]any{"clusterQueue": q.Name}))
		}
	}
	parts := make([]string, 0, len(docs))
	for _, doc := range docs {
		text, err := yaml.Marshal(doc)
		if err != nil {
			return "", fmt.Errorf("policy: %w", err)
		}
		parts = append(parts, string(text))
	}
	return strings.Join(parts, "---\n"), nil
}

// WriteFile writes the policy to dir/policy.yaml and returns its path.
func (p KueuePolicy) WriteFile(dir string) (string, error) {
	text, err := p.YAML()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return "", fmt.Errorf("policy: %w", err)
	}
	return path, nil
}

func (c SchedulerConfig) spec() map[string]any {
	spec := map[string]any{}
	if c.Gang != nil {
		spec["gang"] = c.Gang
	}
	if len(c.DeviceClassMappings) > 0 {
		var mappings []any
		for _, resource := range SortedKeys(c.DeviceClassMappings) {
			mappings = append(mappings, map[string]any{"name": resource, "deviceClassNames": c.DeviceClassMappings[resource]})
		}
		spec["resources"] = map[string]any{"deviceClassMappings": mappings}
	}
	return spec
}

func (q ClusterQueue) spec() map[string]any {
	covered := []string{GpuResource, "cpu"}
	quotas := []any{
		map[string]any{"name": GpuResource, "nominalQuota": q.GPUs},
		map[string]any{"name": "cpu", "nominalQuota": q.CPUs},
	}
	for _, name := range SortedKeys(q.Extra) {
		covered = append(covered, name)
		quotas = append(quotas, map[string]any{"name": name, "nominalQuota": q.Extra[name]})
	}
	flavor := q.Flavor
	if flavor == "" {
		flavor = H100Flavor
	}
	spec := map[string]any{"resourceGroups": []any{map[string]any{
		"coveredResources": covered,
		"flavors":          []any{map[string]any{"name": flavor, "resources": quotas}},
	}}}
	if q.Cohort != "" {
		spec["cohort"] = q.Cohort
	}
	if q.StrictFIFO {
		spec["queueingStrategy"] = "StrictFIFO"
	}
	if len(q.Preemption) > 0 {
		spec["preemption"] = q.Preemption
	}
	return spec
}

func kueueObject(kind, name, namespace string, spec map[string]any) map[string]any {
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	return map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": kind, "metadata": meta, "spec": spec}
}
