package arena

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// GPUProductLabel is the GPU feature discovery label naming a node's GPU
// model; the trace's nodes get the trace's model name as its value.
const GPUProductLabel = "nvidia.com/gpu.product"

// TraceCut says which part of the trace a scenario replays and how it is
// scaled; every factor is written into the scenario file's header.
type TraceCut struct {
	Name string
	// FirstTask and Tasks pick a contiguous window of the trace's GPU
	// tasks (num_gpu > 0), counted in the file's order from 0.
	FirstTask, Tasks int
	// Nodes is the scaled node list's size.
	Nodes int
	// RuntimeFactor divides every trace runtime (trace seconds per arena
	// second); the result is clamped to [MinRuntimeMs, MaxRuntimeMs].
	RuntimeFactor              float64
	MinRuntimeMs, MaxRuntimeMs int
	// Load is the offered load the arrival compression is chosen for:
	// sum(GPUs x runtime) / (cluster GPUs x arrival window).
	Load    float64
	Timeout string
	// Targets are the goals for this load.
	Targets []Target
}

// TraceStats are what the cut did, for the file's header.
type TraceStats struct {
	GPUTasks        int // GPU tasks in the whole trace
	ZeroGPUTasks    int // tasks left out for num_gpu 0 (whole trace)
	FractionalTasks int // in the window: gpu_milli < 1000, sent as 1 GPU
	OneModelTasks   int // in the window: gpu_spec names one model (nodeSelector)
	ManyModelTasks  int // in the window: gpu_spec names several (no selector)
	Floored, Capped int // runtimes raised to the minimum, cut to the maximum
	TraceSpanS      int64
	// ArrivalFactor divides the trace's arrival offsets (trace seconds per
	// arena second); WindowMs is the arrival window it gives.
	ArrivalFactor float64
	WindowMs      int
	GPUSeconds    float64 // sum of GPUs x runtime, arena seconds
	ClusterGPUs   int
	RealizedLoad  float64
	ModelGPUs     map[string]int // scaled cluster GPUs per model
	GPUsPerTask   map[int]int    // window's tasks by GPUs
	QoS           map[string]int
	TraceNodes    int
	TraceGPUs     int
}

// BuildTraceScenario cuts the trace into a scenario: one task is one pod
// of its GPUs (no gangs) in one queue, on nodes scaled from the node list.
func BuildTraceScenario(nodes []TraceNode, tasks []TraceTask, cut TraceCut) (*Scenario, TraceStats, error) {
	var st TraceStats
	var gpuTasks []TraceTask
	for _, t := range tasks {
		if t.GPUs == 0 {
			st.ZeroGPUTasks++
			continue
		}
		gpuTasks = append(gpuTasks, t)
	}
	st.GPUTasks = len(gpuTasks)
	if cut.FirstTask < 0 || cut.Tasks <= 0 || cut.FirstTask+cut.Tasks > len(gpuTasks) {
		return nil, st, fmt.Errorf("trace cut: tasks %d..%d of %d GPU tasks", cut.FirstTask, cut.FirstTask+cut.Tasks, len(gpuTasks))
	}
	window := gpuTasks[cut.FirstTask : cut.FirstTask+cut.Tasks]
	groups := ScaleTraceNodes(nodes, cut.Nodes)
	st.TraceNodes = len(nodes)
	for _, n := range nodes {
		st.TraceGPUs += n.GPUs
	}
	st.ModelGPUs = map[string]int{}
	for _, g := range groups {
		st.ModelGPUs[g.Labels[GPUProductLabel]] += g.Count * g.GPUs
		st.ClusterGPUs += g.Count * g.GPUs
	}
	workloads := traceWorkloads(window, cut, &st)
	if st.WindowMs <= 0 {
		return nil, st, fmt.Errorf("trace cut: the window's tasks all arrive at once: no arrival window to compress")
	}
	s := &Scenario{
		Name:        cut.Name,
		Description: fmt.Sprintf("Alibaba GPU trace v2023 (openb), %d tasks at %.0f%% offered load on %d nodes shaped like its node list", cut.Tasks, 100*cut.Load, cut.Nodes),
		Source:      "alibaba/clusterdata cluster-trace-gpu-v2023/csv/" + TraceTaskFile + " and " + TraceNodeFile,
		TimeScale:   1, Seed: 1, Timeout: cut.Timeout, Targets: cut.Targets,
		Nodes:     NodeSpec{Groups: groups},
		Policy:    tracePolicy(groups),
		Queues:    []QueueRef{{Namespace: traceQueue, LocalQueue: traceQueue}},
		Workloads: workloads,
	}
	s.Scale.Queues.Kept, s.Scale.Queues.Of = 1, 1
	s.Scale.Counts = float64(cut.Tasks) / float64(st.GPUTasks)
	s.Scale.Factor = s.Scale.Counts
	s.Scale.Why = fmt.Sprintf("%d of the trace's %d GPU tasks (a contiguous window) on %d of its %d nodes, so that a round "+
		"per arm takes a few minutes on two cores", cut.Tasks, st.GPUTasks, cut.Nodes, st.TraceNodes)
	return s, st, s.Check()
}

// traceQueue is the one LocalQueue (and its namespace and ClusterQueue).
const traceQueue = "trace"

// traceWorkloads turns the window's tasks into workloads: runtimes
// compressed by RuntimeFactor and clamped, arrivals compressed so that
// the offered load is cut.Load.
func traceWorkloads(window []TraceTask, cut TraceCut, st *TraceStats) []WorkloadSpec {
	st.GPUsPerTask, st.QoS = map[int]int{}, map[string]int{}
	runtimes := make([]int, len(window))
	for i, t := range window {
		runtimes[i] = traceRuntimeMs(t, cut, st)
		st.GPUSeconds += float64(t.GPUs*runtimes[i]) / 1000
		st.GPUsPerTask[t.GPUs]++
		st.QoS[t.QoS]++
	}
	first := window[0].Created
	st.TraceSpanS = window[len(window)-1].Created - first
	windowS := st.GPUSeconds / (float64(st.ClusterGPUs) * cut.Load)
	st.ArrivalFactor = math.Max(float64(st.TraceSpanS), 1) / windowS
	var out []WorkloadSpec
	for i, t := range window {
		w := WorkloadSpec{
			Name: t.Name, Class: t.QoS, Queue: traceQueue, Pods: 1, PodGPUs: t.GPUs, RuntimeMs: runtimes[i],
			AtMs: int(math.Round(float64(t.Created-first) * 1000 / st.ArrivalFactor)),
		}
		if t.MilliGPU < 1000 {
			st.FractionalTasks++ // nvidia.com/gpu is an integer: a share is a whole GPU in both arms
		}
		switch {
		case len(t.Models) == 1:
			st.OneModelTasks++
			w.NodeSelector = map[string]string{GPUProductLabel: t.Models[0]}
		case len(t.Models) > 1:
			st.ManyModelTasks++
		}
		out = append(out, w)
	}
	st.WindowMs = out[len(out)-1].AtMs - out[0].AtMs
	st.RealizedLoad = st.GPUSeconds * 1000 / (float64(st.ClusterGPUs) * float64(st.WindowMs))
	return out
}

func traceRuntimeMs(t TraceTask, cut TraceCut, st *TraceStats) int {
	ms := int(math.Round(float64(t.RuntimeSeconds()) * 1000 / cut.RuntimeFactor))
	switch {
	case ms < cut.MinRuntimeMs:
		st.Floored++
		return cut.MinRuntimeMs
	case ms > cut.MaxRuntimeMs:
		st.Capped++
		return cut.MaxRuntimeMs
	}
	return ms
}

// ScaleTraceNodes scales the node list to n nodes keeping its mix of
// shapes (model, GPUs per node): each shape gets its share of n rounded
// down, and the nodes left over go to the largest remainders (ties: the
// more common shape, then model and GPUs). Groups come out by model's
// GPUs, most first, then by GPUs per node.
func ScaleTraceNodes(nodes []TraceNode, n int) []NodeGroup {
	type shape struct {
		model string
		gpus  int
	}
	count := map[shape]int{}
	for _, node := range nodes {
		if node.GPUs > 0 {
			count[shape{node.Model, node.GPUs}]++
		}
	}
	type share struct {
		shape
		of, got int
		rest    float64
	}
	var shares []*share
	left := n
	for sh, c := range count {
		exact := float64(c) * float64(n) / float64(len(nodes))
		s := &share{shape: sh, of: c, got: int(exact), rest: exact - math.Floor(exact)}
		left -= s.got
		shares = append(shares, s)
	}
	sort.Slice(shares, func(i, j int) bool {
		a, b := shares[i], shares[j]
		if a.rest != b.rest {
			return a.rest > b.rest
		}
		if a.of != b.of {
			return a.of > b.of
		}
		return a.model+fmt.Sprint(a.gpus) < b.model+fmt.Sprint(b.gpus)
	})
	for i := 0; left > 0 && i < len(shares); i, left = i+1, left-1 {
		shares[i].got++
	}
	modelGPUs := map[string]int{}
	var groups []NodeGroup
	for _, s := range shares {
		if s.got > 0 {
			modelGPUs[s.model] += s.got * s.gpus
			groups = append(groups, NodeGroup{Count: s.got, GPUs: s.gpus, Labels: map[string]string{GPUProductLabel: s.model}})
		}
	}
	sort.Slice(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		ma, mb := a.Labels[GPUProductLabel], b.Labels[GPUProductLabel]
		if modelGPUs[ma] != modelGPUs[mb] {
			return modelGPUs[ma] > modelGPUs[mb]
		}
		if ma != mb {
			return ma < mb
		}
		return a.GPUs > b.GPUs
	})
	return groups
}

// traceFlavor is a GPU model's ResourceFlavor name.
func traceFlavor(model string) string { return strings.ToLower(model) }

// tracePolicy is one ResourceFlavor per model (nodeLabels: the model's
// label) and one ClusterQueue covering nvidia.com/gpu with every flavor,
// in the groups' order (most GPUs first), each flavor's nominal quota
// that model's GPUs: quota equals capacity, so a pod admitted but not
// placeable is held back by fragmentation, not by a quota larger than
// the nodes.
func tracePolicy(groups []NodeGroup) string {
	var models []string
	gpus := map[string]int{}
	for _, g := range groups {
		m := g.Labels[GPUProductLabel]
		if gpus[m] == 0 {
			models = append(models, m)
		}
		gpus[m] += g.Count * g.GPUs
	}
	var b strings.Builder
	for _, m := range models {
		fmt.Fprintf(&b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: %s\nspec:\n  nodeLabels:\n    %s: %s\n---\n",
			traceFlavor(m), GPUProductLabel, m)
	}
	fmt.Fprintf(&b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: %s\nspec:\n  namespaceSelector: {}\n"+
		"  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n", traceQueue)
	for _, m := range models {
		fmt.Fprintf(&b, "    - name: %s\n      resources:\n      - name: nvidia.com/gpu\n        nominalQuota: %d\n", traceFlavor(m), gpus[m])
	}
	fmt.Fprintf(&b, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  namespace: %s\n  name: %s\nspec:\n  clusterQueue: %s\n",
		traceQueue, traceQueue, traceQueue)
	return b.String()
}
