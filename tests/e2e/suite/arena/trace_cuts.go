package arena

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// traceCut is scenario 2's cut, the same for both loads: 360 GPU tasks
// from index 2000 (a window of 2.2 days of the trace whose tasks include
// 2-, 4- and 8-GPU ones) on 20 nodes (about 100 GPUs), runtimes a
// hundredth of the trace's within [1 s, 40 s], so that a round per arm
// stays within a few minutes on two cores. The timeout was 6 minutes in
// the first comparison; 3 caps a round whose pods never find a node (Kueue
// left 2 admitted pods unbound at 130 %) and changes no other figure.
func traceCut(name string, load float64, targets ...Target) TraceCut {
	return TraceCut{
		Name: name, FirstTask: 2000, Tasks: 360, Nodes: 20,
		RuntimeFactor: 100, MinRuntimeMs: 1000, MaxRuntimeMs: 40000,
		Load: load, Timeout: "3m", Targets: targets,
	}
}

// TraceCuts are the scenario files cmd/arena-trace writes: the same tasks
// at 100 % and 130 % offered load, with the targets (allocation
// and admitted-but-unplaceable pods at 130 %, the wait's p90 at both).
var TraceCuts = []TraceCut{
	traceCut("trace-100", 1.0,
		Target{Figure: "task_wait_p90_ms", Rule: "ratio<=1.0"},
		Target{Figure: "unplaceable_pods", Rule: "gpusched<=0"}),
	traceCut("trace-130", 1.3,
		Target{Figure: "allocation_arrivals_pct", Rule: "gpusched>=kueue+3"},
		Target{Figure: "unplaceable_pods", Rule: "gpusched<=0"},
		Target{Figure: "task_wait_p90_ms", Rule: "ratio<=1.0"}),
}

// GenerateTraceScenario reads the trace under dataDir and returns cut's
// scenario file.
func GenerateTraceScenario(dataDir string, cut TraceCut) ([]byte, error) {
	nodeFile, err := os.Open(filepath.Join(dataDir, TraceNodeFile))
	if err != nil {
		return nil, err
	}
	defer nodeFile.Close()
	nodes, err := ReadTraceNodes(nodeFile)
	if err != nil {
		return nil, err
	}
	taskFile, err := os.Open(filepath.Join(dataDir, TraceTaskFile))
	if err != nil {
		return nil, err
	}
	defer taskFile.Close()
	tasks, err := ReadTraceTasks(taskFile)
	if err != nil {
		return nil, err
	}
	s, st, err := BuildTraceScenario(nodes, tasks, cut)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cut.Name, err)
	}
	var b bytes.Buffer
	err = WriteTraceScenario(&b, s, st, cut)
	return b.Bytes(), err
}
