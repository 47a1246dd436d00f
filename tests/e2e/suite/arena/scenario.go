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
	// ClusterQueue, LocalQueue, WorkloadPriorityClass).
	Policy string `json:"policy"`
	// Queues are the LocalQueues workloads are sent to, each in its own
	// namespace (Kueue's generator names both after the ClusterQueue).
	Queues       []QueueRef    `json:"queues"`
	WorkloadSets []WorkloadSet `json:"workloadSets"`
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
// dgx-h100-2) with GPUs nvidia.com/gpu each.
type NodeSpec struct {
	Count int `json:"count"`
	GPUs  int `json:"gpus"`
}

// QueueRef is a LocalQueue in its namespace.
type QueueRef struct {
	Namespace  string `json:"namespace"`
	LocalQueue string `json:"localQueue"`
}

// WorkloadSet is one of Kueue's workloadsSets with one workload template:
// Count workloads of class Class, each Request single-GPU pods.
type WorkloadSet struct {
	Class string `json:"class"`
	Count int    `json:"count"`
	// KueueCount is the original's count, before Scale.Counts.
	KueueCount int `json:"kueueCount,omitempty"`
	IntervalMs int `json:"intervalMs"`
	RuntimeMs  int `json:"runtimeMs"`
	Request    int `json:"request"`
	// PriorityClass names a WorkloadPriorityClass of the policy (label
	// kueue.x-k8s.io/priority-class, read by Kueue and gpusched alike).
	PriorityClass string `json:"priorityClass"`
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
	checks := []func() error{s.checkFields, s.checkScale, s.checkPolicy}
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
	case s.Nodes.Count <= 0 || s.Nodes.GPUs <= 0:
		return fmt.Errorf("nodes %+v, want a count and GPUs each", s.Nodes)
	case len(s.Queues) == 0 || len(s.WorkloadSets) == 0:
		return fmt.Errorf("no queues or no workloadSets")
	}
	if _, err := s.TimeoutDuration(); err != nil {
		return err
	}
	if len(s.Namespaces()) != len(s.Queues) {
		return fmt.Errorf("two queues share a namespace: workload names are unique per queue only")
	}
	for _, w := range s.WorkloadSets {
		if w.Class == "" || w.Count <= 0 || w.IntervalMs <= 0 || w.RuntimeMs <= 0 || w.Request <= 0 {
			return fmt.Errorf("workload set %+v: class, count, intervalMs, runtimeMs and request are required", w)
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
	for _, w := range s.WorkloadSets {
		if _, ok := p.PriorityClasses[w.PriorityClass]; w.PriorityClass != "" && !ok {
			return fmt.Errorf("workload set %s: no WorkloadPriorityClass %q in the policy", w.Class, w.PriorityClass)
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
	return out
}

// Totals are the scenario's workloads and pods, without replacements.
func (s *Scenario) Totals() (workloads, pods int) {
	for _, w := range s.WorkloadSets {
		workloads += w.Count * len(s.Queues)
		pods += w.Count * w.Request * len(s.Queues)
	}
	return workloads, pods
}

// String is a one-line summary for logs.
func (s *Scenario) String() string {
	workloads, pods := s.Totals()
	var sets []string
	for _, w := range s.WorkloadSets {
		sets = append(sets, fmt.Sprintf("%s %dx%d pods/%dms every %dms", w.Class, w.Count, w.Request, w.RuntimeMs, w.IntervalMs))
	}
	return fmt.Sprintf("%s: %d queues x [%s], time x%v; %d workloads, %d pods on %d nodes x %d GPUs (scale %v)",
		s.Name, len(s.Queues), strings.Join(sets, ", "), s.TimeScale, workloads, pods, s.Nodes.Count, s.Nodes.GPUs, s.Scale.Factor)
}
