package arena

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// A Scenario is what both arms are put to: the nodes, the quota policy
// (Kueue's objects, applied to the Kueue arm and given to gpusched as its
// --policy, the same YAML), and the workloads with their arrival times.
// Scenarios are YAML files under tests/e2e/arena/scenarios/ (ScenarioDir);
// LoadScenario reads and checks one.
//
// A workload is a pod group of Request single-GPU pods (Kueue's
// kueue.x-k8s.io/pod-group-name and pod-group-total-count, which gpusched
// reads too), created in the namespace of its LocalQueue. The arrivals are
// those of Kueue's scheduler performance generator
// (test/performance/scheduler/runner/generator): every queue gets every
// workload set, and workload i of a set (from 0) arrives at
// (i+1) x intervalMs after the round starts; a set's workloads run
// runtimeMs once running.
type Scenario struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Source names what the scenario reproduces (a file of Kueue's).
	Source string `json:"source,omitempty"`
	Scale  Scale  `json:"scale"`
	// TimeScale multiplies every interval and runtime (1: as written; 2:
	// everything twice as slow, so half the rate of API writes).
	TimeScale float64 `json:"timeScale"`
	// Seed drives JitterMs, each arrival's extra delay drawn uniformly
	// from [0, JitterMs). No jitter: no randomness, as in Kueue's
	// generator.
	Seed     uint64 `json:"seed"`
	JitterMs int    `json:"jitterMs,omitempty"`
	// Timeout bounds a round's replay (a Go duration, e.g. "5m").
	Timeout string   `json:"timeout"`
	Nodes   NodeSpec `json:"nodes"`
	// Policy is Kueue objects as YAML (ResourceFlavor, Cohort,
	// ClusterQueue, LocalQueue, WorkloadPriorityClass, Topology) and at
	// most one Kueue Configuration (config.kueue.x-k8s.io), whose sections
	// the Kueue arm's manager runs with (KueueConfigurationOverlay) and
	// gpusched reads from its --policy, the same text.
	Policy string `json:"policy"`
	// DomainLabel, if set, is a node label (a rack, say) whose values each
	// workload's pods ran under are measured and compared between arms
	// (workloadDomains): topology-aware placement.
	DomainLabel string `json:"domainLabel,omitempty"`
	// Provisioner, if set, installs the ProvisioningRequest CRD in both
	// arms and runs the arena's test provisioner during the replay (for a
	// policy with Kueue's provisioning admission check).
	Provisioner *ProvisionerSpec `json:"provisioner,omitempty"`
	// Queues are the LocalQueues workloads are sent to, each in its own
	// namespace (Kueue's generator names both after the ClusterQueue).
	Queues       []QueueRef    `json:"queues"`
	WorkloadSets []WorkloadSet `json:"workloadSets,omitempty"`
	// Workloads are arrivals listed one by one (a trace's tasks, a
	// reclaim's borrowers), besides or instead of WorkloadSets.
	Workloads []WorkloadSpec `json:"workloads,omitempty"`
	// Targets are the goals for this scenario, judged on the
	// medians of the runner's report (target.go).
	Targets []Target `json:"targets,omitempty"`
}

// Scale says how the scenario was cut down from the one it reproduces:
// Factor = Queues.Kept/Queues.Of x Counts, the share of the original's
// workloads (and pods) it keeps.
type Scale struct {
	Factor float64 `json:"factor"`
	Queues struct {
		Kept int `json:"kept"`
		Of   int `json:"of"`
	} `json:"queues"`
	// Counts multiplies each workload set's count (kueueCount).
	Counts float64 `json:"counts"`
	Why    string  `json:"why"`
}

// NodeSpec is Count copies of a DGX H100 node (the demo cluster's
// dgx-h100-2) with GPUs nvidia.com/gpu each, or, when Groups is set,
// each group's nodes in turn (Count and GPUs then unset).
type NodeSpec struct {
	Count  int         `json:"count,omitempty"`
	GPUs   int         `json:"gpus,omitempty"`
	Groups []NodeGroup `json:"groups,omitempty"`
}

// NodeGroup is Count nodes of GPUs each with Labels set on top of the
// template's (a GPU model's nvidia.com/gpu.product, say).
type NodeGroup struct {
	Count  int               `json:"count"`
	GPUs   int               `json:"gpus"`
	Labels map[string]string `json:"labels,omitempty"`
}

// AllGroups are the nodes as groups: Groups, or Count x GPUs as one.
func (n NodeSpec) AllGroups() []NodeGroup {
	if len(n.Groups) > 0 {
		return n.Groups
	}
	return []NodeGroup{{Count: n.Count, GPUs: n.GPUs}}
}

// Total is the number of nodes and of their GPUs.
func (n NodeSpec) Total() (nodes, gpus int) {
	for _, g := range n.AllGroups() {
		nodes += g.Count
		gpus += g.Count * g.GPUs
	}
	return nodes, gpus
}

// QueueRef is a LocalQueue in its namespace.
type QueueRef struct {
	Namespace  string `json:"namespace"`
	LocalQueue string `json:"localQueue"`
}

// WorkloadSet is one of Kueue's workloadsSets with one workload template:
// Count workloads of class Class, each Request pods of PodGPUs GPUs (1
// when unset, as in Kueue's generator, where request is the workload's
// total). Workload i arrives at StartMs + (i+1) x IntervalMs.
type WorkloadSet struct {
	Class string `json:"class"`
	Count int    `json:"count"`
	// KueueCount is the original's count, before Scale.Counts.
	KueueCount int `json:"kueueCount,omitempty"`
	StartMs    int `json:"startMs,omitempty"`
	IntervalMs int `json:"intervalMs"`
	RuntimeMs  int `json:"runtimeMs"`
	Request    int `json:"request"`
	PodGPUs    int `json:"podGPUs,omitempty"`
	// PriorityClass names a WorkloadPriorityClass of the policy (label
	// kueue.x-k8s.io/priority-class, read by Kueue and gpusched alike).
	PriorityClass string `json:"priorityClass"`
	// Queues limits the set to these queues' namespaces (all when empty).
	Queues []string `json:"queues,omitempty"`
	// NodeSelector goes on every pod (a GPU model's label, say).
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Annotations go on every pod (Kueue's podset topology annotations,
	// say).
	Annotations map[string]string `json:"annotations,omitempty"`
	// FirstReadyAfterMs, if set, holds the readiness of each member's
	// first pod back that long after it starts (the fake kubelet's
	// e2e.gpusched.io/ready-after); replacements are Ready at once: a first
	// start that hangs (a slow image pull, say) and a retry that works.
	FirstReadyAfterMs int `json:"firstReadyAfterMs,omitempty"`
}

// WorkloadSpec is one workload listed by itself: Pods pods of PodGPUs
// GPUs (1 when unset) arriving at AtMs in Queue's namespace.
type WorkloadSpec struct {
	Name          string            `json:"name"`
	Class         string            `json:"class"`
	Queue         string            `json:"queue"`
	AtMs          int               `json:"atMs"`
	RuntimeMs     int               `json:"runtimeMs"`
	Pods          int               `json:"pods"`
	PodGPUs       int               `json:"podGPUs,omitempty"`
	PriorityClass string            `json:"priorityClass,omitempty"`
	NodeSelector  map[string]string `json:"nodeSelector,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
	// FirstReadyAfterMs: as WorkloadSet's.
	FirstReadyAfterMs int `json:"firstReadyAfterMs,omitempty"`
}

// ScenarioDir is where the scenario files are, relative to the repo.
const ScenarioDir = "tests/e2e/arena/scenarios"

// ScenarioPath is the file of the named scenario under repo.
func ScenarioPath(repo, name string) string {
	return filepath.Join(repo, ScenarioDir, name+".yaml")
}

// LoadScenario reads a scenario file strictly (an unknown field is an
// error) and checks it.
func LoadScenario(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	var s Scenario
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", path, err)
	}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", path, err)
	}
	return &s, nil
}

// Check reports the first thing wrong with s: missing fields, a scale that
// does not add up, queues or priority classes the policy lacks.
func (s *Scenario) Check() error {
	checks := []func() error{s.checkFields, s.checkScale, s.checkPolicy, s.checkTargets}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Scenario) checkFields() error {
	switch {
	case s.Name == "":
		return fmt.Errorf("no name")
	case s.TimeScale <= 0:
		return fmt.Errorf("timeScale %v, want > 0", s.TimeScale)
	case s.JitterMs < 0:
		return fmt.Errorf("jitterMs %d, want >= 0", s.JitterMs)
	case len(s.Queues) == 0 || len(s.WorkloadSets)+len(s.Workloads) == 0:
		return fmt.Errorf("no queues, or neither workloadSets nor workloads")
	}
	if err := s.checkNodes(); err != nil {
		return err
	}
	if s.Provisioner != nil && s.Provisioner.DelayMs < 0 {
		return fmt.Errorf("provisioner.delayMs %d, want >= 0", s.Provisioner.DelayMs)
	}
	if _, err := s.TimeoutDuration(); err != nil {
		return err
	}
	if len(s.Namespaces()) != len(s.Queues) {
		return fmt.Errorf("two queues share a namespace: workload names are unique per queue only")
	}
	for _, w := range s.WorkloadSets {
		if w.Class == "" || w.Count <= 0 || w.IntervalMs <= 0 || w.RuntimeMs <= 0 || w.Request <= 0 || w.PodGPUs < 0 || w.StartMs < 0 || w.FirstReadyAfterMs < 0 {
			return fmt.Errorf("workload set %+v: class, count, intervalMs, runtimeMs and request are required; podGPUs, startMs and firstReadyAfterMs not negative", w)
		}
		for _, ns := range w.Queues {
			if !slices.Contains(s.Namespaces(), ns) {
				return fmt.Errorf("workload set %s: queue %q is not among the queues' namespaces", w.Class, ns)
			}
		}
	}
	seen := map[string]bool{}
	for _, w := range s.Workloads {
		key := w.Queue + "/" + w.Name
		if w.Name == "" || w.Class == "" || w.AtMs < 0 || w.RuntimeMs <= 0 || w.Pods <= 0 || w.PodGPUs < 0 || w.FirstReadyAfterMs < 0 || seen[key] {
			return fmt.Errorf("workload %+v: name (unique in its queue), class, runtimeMs and pods are required; atMs, podGPUs and firstReadyAfterMs not negative", w)
		}
		seen[key] = true
		if !slices.Contains(s.Namespaces(), w.Queue) {
			return fmt.Errorf("workload %s: queue %q is not among the queues' namespaces", w.Name, w.Queue)
		}
	}
	return nil
}

func (s *Scenario) checkNodes() error {
	if len(s.Nodes.Groups) > 0 && (s.Nodes.Count != 0 || s.Nodes.GPUs != 0) {
		return fmt.Errorf("nodes: count and gpus, or groups, not both")
	}
	for _, g := range s.Nodes.AllGroups() {
		if g.Count <= 0 || g.GPUs <= 0 {
			return fmt.Errorf("nodes %+v, want a count and GPUs each", g)
		}
	}
	return nil
}

// checkScale: the stated factor is what the queues and counts keep, and
// each count is its kueueCount scaled (rounded).
func (s *Scenario) checkScale() error {
	sc := s.Scale
	if sc.Queues.Kept != len(s.Queues) || sc.Queues.Of < sc.Queues.Kept || sc.Counts <= 0 || sc.Counts > 1 {
		return fmt.Errorf("scale %+v: queues.kept must be the %d queues, of at least that many; counts in (0, 1]", sc, len(s.Queues))
	}
	if want := float64(sc.Queues.Kept) / float64(sc.Queues.Of) * sc.Counts; math.Abs(sc.Factor-want) > 1e-9 {
		return fmt.Errorf("scale.factor %v, but %d/%d queues x counts %v = %v", sc.Factor, sc.Queues.Kept, sc.Queues.Of, sc.Counts, want)
	}
	for _, w := range s.WorkloadSets {
		if w.KueueCount == 0 {
			continue
		}
		if want := int(math.Round(float64(w.KueueCount) * sc.Counts)); w.Count != want {
			return fmt.Errorf("workload set %s: count %d, but kueueCount %d x %v = %d", w.Class, w.Count, w.KueueCount, sc.Counts, want)
		}
	}
	return nil
}

func (s *Scenario) checkPolicy() error {
	p, err := ParsePolicy(s.Policy)
	if err != nil {
		return err
	}
	for _, q := range s.Queues {
		if _, ok := p.ClusterQueueOf[q]; !ok {
			return fmt.Errorf("queue %s/%s: no LocalQueue of that name in the policy", q.Namespace, q.LocalQueue)
		}
	}
	classes := map[string]string{}
	for _, w := range s.WorkloadSets {
		classes[w.PriorityClass] = "workload set " + w.Class
	}
	for _, w := range s.Workloads {
		classes[w.PriorityClass] = "workload " + w.Name
	}
	for class, who := range classes {
		if _, ok := p.PriorityClasses[class]; class != "" && !ok {
			return fmt.Errorf("%s: no WorkloadPriorityClass %q in the policy", who, class)
		}
	}
	return nil
}

// TimeoutDuration is Timeout parsed.
func (s *Scenario) TimeoutDuration() (time.Duration, error) {
	d, err := time.ParseDuration(s.Timeout)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("timeout %q: want a positive Go duration", s.Timeout)
	}
	return d, nil
}

// Namespaces are the queues' namespaces, in order, each once.
func (s *Scenario) Namespaces() []string {
	var out []string
	seen := map[string]bool{}
	for _, q := range s.Queues {
		if !seen[q.Namespace] {
			seen[q.Namespace] = true
			out = append(out, q.Namespace)
		}
	}
	return out
}

// Classes are the workload sets' classes, in order, each once.
func (s *Scenario) Classes() []string {
	var out []string
	for _, w := range s.WorkloadSets {
		if !slices.Contains(out, w.Class) {
			out = append(out, w.Class)
		}
	}
	for _, w := range s.Workloads {
		if !slices.Contains(out, w.Class) {
			out = append(out, w.Class)
		}
	}
	return out
}

// Totals are the scenario's workloads and pods, without replacements.
func (s *Scenario) Totals() (workloads, pods int) {
	for _, a := range s.Arrivals() {
		workloads++
		pods += a.Pods
	}
	return workloads, pods
}

// String is a one-line summary for logs.
func (s *Scenario) String() string {
	workloads, pods := s.Totals()
	var sets []string
	for _, w := range s.WorkloadSets {
		gpus := ""
		if w.PodGPUs > 1 {
			gpus = fmt.Sprintf("x%d GPUs", w.PodGPUs)
		}
		sets = append(sets, fmt.Sprintf("%s %dx%d pods%s/%dms every %dms", w.Class, w.Count, w.Request, gpus, w.RuntimeMs, w.IntervalMs))
	}
	if len(s.Workloads) > 0 {
		sets = append(sets, fmt.Sprintf("%d listed", len(s.Workloads)))
	}
	nodes, gpus := s.Nodes.Total()
	return fmt.Sprintf("%s: %d queues x [%s], time x%v; %d workloads, %d pods on %d nodes, %d GPUs (scale %v)",
		s.Name, len(s.Queues), strings.Join(sets, ", "), s.TimeScale, workloads, pods, nodes, gpus, s.Scale.Factor)
}
