package arena

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gpusched.io/e2e/suite/controlplane"
)

const traceTasksCSV = `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
p0,1000,1024,1,1000,,LS,Running,0,500,100
p1,1000,1024,0,0,,BE,Running,10,900,10
p2,1000,1024,1,460,,BE,Succeeded,100,300,120
p3,1000,1024,8,1000,G2,LS,Running,150,1150,150
p4,1000,1024,2,1000,V100M16|V100M32,Burstable,Pending,200,260,
`

const traceNodesCSV = `sn,cpu_milli,memory_mib,gpu,model
n0,96000,393216,8,G2
n1,96000,393216,8,G2
n2,96000,393216,8,G2
n3,104000,524288,2,T4
n4,104000,524288,2,T4
n5,16000,122880,2,P100
`

func TestReadTraceTasks(t *testing.T) {
	tasks, err := ReadTraceTasks(strings.NewReader(traceTasksCSV))
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 5 {
		t.Fatalf("%d tasks, want 5", len(tasks))
	}
	if p := tasks[2]; p.GPUs != 1 || p.MilliGPU != 460 || p.QoS != "BE" || p.RuntimeSeconds() != 180 {
		t.Errorf("p2 %+v (runtime %d), want 1 GPU at 460 milli, BE, 180 s from scheduled", p, p.RuntimeSeconds())
	}
	// Never scheduled: its runtime counts from creation.
	if p := tasks[4]; p.Scheduled != -1 || p.RuntimeSeconds() != 60 || len(p.Models) != 2 || p.Models[1] != "V100M32" {
		t.Errorf("p4 %+v (runtime %d), want unscheduled, 60 s, models V100M16 and V100M32", p, p.RuntimeSeconds())
	}
}

func TestReadTraceRefusesBadFiles(t *testing.T) {
	for name, text := range map[string]string{
		"missing column": "name,num_gpu\np0,1\n",
		"bad number":     strings.Replace(traceTasksCSV, "p0,1000,1024,1,", "p0,1000,1024,x,", 1),
		"negative time":  strings.Replace(traceTasksCSV, ",0,500,100", ",0,-5,100", 1),
		"ragged row":     traceTasksCSV + "p5,1\n",
	} {
		if _, err := ReadTraceTasks(strings.NewReader(text)); err == nil {
			t.Errorf("%s: read without error", name)
		}
	}
	if _, err := ReadTraceNodes(strings.NewReader("sn,gpu\nn0,8\n")); err == nil {
		t.Errorf("a node list without model read without error")
	}
}

func TestScaleTraceNodesKeepsTheMix(t *testing.T) {
	nodes, err := ReadTraceNodes(strings.NewReader(traceNodesCSV))
	if err != nil {
		t.Fatal(err)
	}
	// 4 of 6: G2 3 x 4/6 = 2, T4 2 x 4/6 = 1.33, P100 0.67 -> T4 1, P100 1.
	groups := ScaleTraceNodes(nodes, 4)
	want := []NodeGroup{{2, 8, map[string]string{GPUProductLabel: "G2"}}, {1, 2, map[string]string{GPUProductLabel: "P100"}},
		{1, 2, map[string]string{GPUProductLabel: "T4"}}}
	if len(groups) != len(want) {
		t.Fatalf("groups %v, want %v", groups, want)
	}
	for i := range want {
		if groups[i].Count != want[i].Count || groups[i].GPUs != want[i].GPUs || groups[i].Labels[GPUProductLabel] != want[i].Labels[GPUProductLabel] {
			t.Errorf("group %d: %+v, want %+v", i, groups[i], want[i])
		}
	}
}

func TestBuildTraceScenarioHitsItsLoad(t *testing.T) {
	nodes, _ := ReadTraceNodes(strings.NewReader(traceNodesCSV))
	tasks, _ := ReadTraceTasks(strings.NewReader(traceTasksCSV))
	cut := TraceCut{Name: "t", FirstTask: 0, Tasks: 4, Nodes: 6, RuntimeFactor: 10, MinRuntimeMs: 10000, MaxRuntimeMs: 60000,
		Load: 1.3, Timeout: "1m"}
	s, st, err := BuildTraceScenario(nodes, tasks, cut)
	if err != nil {
		t.Fatal(err)
	}
	// p1 (no GPU) is left out; runtimes 400, 180, 1000, 60 s / 10 =
	// 40, 18, 100 -> 60 (capped), 6 -> 10 (floored) s.
	if st.ZeroGPUTasks != 1 || st.FractionalTasks != 1 || st.OneModelTasks != 1 || st.ManyModelTasks != 1 || st.Capped != 1 || st.Floored != 1 {
		t.Errorf("stats %+v", st)
	}
	if len(s.Workloads) != 4 || s.Workloads[3].Name != "p4" || s.Workloads[3].PodGPUs != 2 || s.Workloads[3].NodeSelector != nil {
		t.Fatalf("workloads %+v", s.Workloads)
	}
	if sel := s.Workloads[2].NodeSelector[GPUProductLabel]; sel != "G2" || s.Workloads[1].PodGPUs != 1 {
		t.Errorf("p3's selector %q, p2's GPUs %d; want G2, 1 (a share is a whole GPU)", sel, s.Workloads[1].PodGPUs)
	}
	// GPU-s: 40 + 18 + 8 x 60 + 2 x 10 = 558 on 30 GPUs at 1.3: 14.3 s.
	if st.GPUSeconds != 558 || st.ClusterGPUs != 30 || st.WindowMs != 14308 || st.RealizedLoad < 1.2999 || st.RealizedLoad > 1.3001 {
		t.Errorf("GPU-s %v on %d GPUs over %d ms: load %v; want 558, 30, 14308, 1.3", st.GPUSeconds, st.ClusterGPUs, st.WindowMs, st.RealizedLoad)
	}
	if p := s.Workloads[1]; p.AtMs != 7154 {
		t.Errorf("p2 arrives at %d ms, want 100 s of 200 s -> 7154", p.AtMs)
	}
}

func TestWriteTraceScenarioReadsBack(t *testing.T) {
	nodes, _ := ReadTraceNodes(strings.NewReader(traceNodesCSV))
	tasks, _ := ReadTraceTasks(strings.NewReader(traceTasksCSV))
	cut := TraceCut{Name: "t", Tasks: 4, Nodes: 6, RuntimeFactor: 10, MinRuntimeMs: 10000, MaxRuntimeMs: 60000, Load: 1, Timeout: "1m"}
	s, st, err := BuildTraceScenario(nodes, tasks, cut)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteTraceScenario(&b, s, st, cut); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "t.yaml")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := LoadScenario(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(back.Workloads) != 4 || back.Workloads[2].NodeSelector[GPUProductLabel] != "G2" || back.Workloads[3].AtMs != s.Workloads[3].AtMs {
		t.Errorf("read back %+v, wrote %+v", back.Workloads, s.Workloads)
	}
	info, err := ParsePolicy(back.Policy)
	if err != nil || info.NominalGPUs[traceQueue] != 30 {
		t.Errorf("policy: %v, nominal %v; want 30 GPUs, the nodes' (%s)", err, info, back.Policy)
	}
}

// The committed scenario files are what cmd/arena-trace writes from the
// trace (skipped where the trace is absent).
func TestTraceScenarioFilesAreGenerated(t *testing.T) {
	repo, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(repo, TraceDataDir)
	if _, err := os.Stat(filepath.Join(data, TraceTaskFile)); err != nil {
		t.Skipf("no trace at %s", data)
	}
	for _, cut := range TraceCuts {
		want, err := GenerateTraceScenario(data, cut)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(ScenarioPath(repo, cut.Name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what cmd/arena-trace writes: run it", cut.Name)
		}
		if _, err := LoadScenario(ScenarioPath(repo, cut.Name)); err != nil {
			t.Error(err)
		}
	}
}
