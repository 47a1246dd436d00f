package suite_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
	"gpusched.io/e2e/suite/promtext"
)

const (
	preemptNamespace = "e2e"
	// gpu-link "nvlink" asks gpusched for GPUs of one NVLink island;
	// kube-scheduler knows nothing of it.
	preemptLinkAnnotation      = "gpusched.io/gpu-link"
	preemptTopologyAnnotation  = "gpusched.io/gpu-topology"
	preemptNodeA, preemptNodeB = "island-a", "island-b"
)

// Priority classes of the preemption test. kube-scheduler keeps the more
// important victims first, so these values decide which victims it
// proposes on each node.
var preemptPriorities = []struct {
	name  string
	value int32
}{{"e2e-low", 100}, {"e2e-mid", 150}, {"e2e-keep", 300}, {"e2e-high", 1000}}

// TestPreemptVerbDeletesExactlyTheVictimsThatFreeAFittingGpuSet: two
// 8-GPU nodes, each with two NVLink islands (GPUs 0-3 and 4-7), are full of
// lower-priority pods; a high-priority pod needs 2 GPUs on one island.
//
//	island-a: on each island a 3-GPU pod (e2e-keep) and a 1-GPU pod (e2e-low)
//	island-b: on each island a 4-GPU pod, one e2e-keep and one e2e-mid
//
// kube-scheduler counts GPUs only. On island-a it keeps both 3-GPU pods and
// proposes the two 1-GPU pods: 2 GPUs, but one on each island. On island-b
// it proposes the e2e-mid pod: a whole island. By its own rules it would
// pick island-a (lowest highest-victim priority: 100 < 150), so the test
// passes only if gpusched's preempt verb drops island-a, whose victims
// free no fitting set, and keeps island-b.
func TestPreemptVerbDeletesExactlyTheVictimsThatFreeAFittingGpuSet(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 75*time.Second)
	defer cancel()
	preemptCreateNodes(ctx, t, cp, preemptNodeA, preemptNodeB)
	preemptCreatePriorityClasses(ctx, t, cp.Client)
	if err := controlplane.EnsureNamespace(ctx, cp.Client, preemptNamespace); err != nil {
		t.Fatal(err)
	}
	// The 3- and 4-GPU pods first: then the layout above is the only one
	// gpusched may choose (an nvlink pod stays inside one island).
	preemptRunPinned(ctx, t, cp, preemptNodeA, preemptPod{"a-keep-0", "e2e-keep", 3, true}, preemptPod{"a-keep-1", "e2e-keep", 3, true})
	preemptRunPinned(ctx, t, cp, preemptNodeA, preemptPod{"a-low-0", "e2e-low", 1, false}, preemptPod{"a-low-1", "e2e-low", 1, false})
	preemptRunPinned(ctx, t, cp, preemptNodeB, preemptPod{"b-keep", "e2e-keep", 4, true}, preemptPod{"b-mid", "e2e-mid", 4, true})
	before := cluster.PodsByName(ctx, t, cp.Client, preemptNamespace)
	preemptCheckLayout(t, before)

	_, err := cluster.NewPod(preemptNamespace, "preemptor").SchedulerName(cluster.SchedulerName).
		Gpus(2).Annotation(preemptLinkAnnotation, "nvlink").PriorityClass("e2e-high").Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
	preemptor, err := cluster.WaitBound(ctx, cp.Client, preemptNamespace, "preemptor", 40*time.Second)
	if err != nil {
		t.Fatalf("the preemptor never bound: %v\ngpusched preempt log: %q", err, preemptLogLines(t, cp))
	}
	cluster.WaitGone(ctx, t, cp.Client, before["b-mid"])

	after := cluster.PodsByName(ctx, t, cp.Client, preemptNamespace)
	preemptCheckSurvivors(t, before, after, "b-mid")
	preemptCheckPreemptorGpus(t, preemptor, before)
	faultCheckLedger(ctx, t, cp.Client)
	preemptCheckVerbUsed(t, cp)
}

// preemptIslandTopology is a gpusched.io/gpu-topology annotation: 8 GPUs,
// NVLink (NV18) inside 0-3 and inside 4-7, only PCIe across the halves.
func preemptIslandTopology() string {
	links := make([][]string, 8)
	for i := range links {
		links[i] = make([]string, 8)
		for j := range links[i] {
			switch {
			case i == j:
				links[i][j] = "X"
			case i/4 == j/4:
				links[i][j] = "NV18"
			default:
				links[i][j] = "SYS"
			}
		}
	}
	doc, _ := json.Marshal(map[string]any{"links": links, "numa": []int{0, 0, 0, 0, 1, 1, 1, 1}})
	return string(doc)
}

// preemptCreateNodes registers 8-GPU nodes like the demo's dgx-h100-2, with
// the two-island topology instead of its NVSwitch default.
func preemptCreateNodes(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, names ...string) {
	t.Helper()
	demo, err := cluster.DemoNodes(cp.Repo)
	if err != nil {
		t.Fatal(err)
	}
	var template *corev1.Node
	for i := range demo {
		if demo[i].Name == "dgx-h100-2" {
			template = &demo[i]
		}
	}
	if template == nil {
		t.Fatal("demo cluster has no dgx-h100-2")
	}
	var nodes []corev1.Node
	for _, name := range names {
		node := template.DeepCopy()
		node.Name = name
		node.Labels[cluster.HostnameLabel] = name
		if node.Annotations == nil {
			node.Annotations = map[string]string{}
		}
		node.Annotations[preemptTopologyAnnotation] = preemptIslandTopology()
		nodes = append(nodes, *node)
	}
	if err := cluster.CreateNodes(ctx, cp.Client, nodes); err != nil {
		t.Fatal(err)
	}
}

func preemptCreatePriorityClasses(ctx context.Context, t *testing.T, client kubernetes.Interface) {
	t.Helper()
	for _, p := range preemptPriorities {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: p.name}, Value: p.value}
		if _, err := client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("priority class %s: %v", p.name, err)
		}
	}
}

type preemptPod struct {
	name, priority string
	gpus           int
	nvlink         bool
}

// preemptRunPinned creates the pods on one node (by node selector, through
// kube-scheduler and gpusched) and waits until they run.
func preemptRunPinned(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, node string, pods ...preemptPod) {
	t.Helper()
	for _, p := range pods {
		b := cluster.NewPod(preemptNamespace, p.name).SchedulerName(cluster.SchedulerName).
			Gpus(p.gpus).PriorityClass(p.priority).NodeSelector(cluster.HostnameLabel, node)
		if p.nvlink {
			b.Annotation(preemptLinkAnnotation, "nvlink")
		}
		if _, err := b.Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range pods {
		if _, err := cluster.WaitRunning(ctx, cp.Client, preemptNamespace, p.name, 20*time.Second); err != nil {
			t.Fatal(err)
		}
	}
}

func preemptIsland(gpu int) int { return gpu / 4 }

// preemptCheckLayout checks the premise of the test: on island-a each
// island holds one 3-GPU and one 1-GPU pod; on island-b the two pods hold
// one island each. Anything else means gpusched broke an nvlink request.
func preemptCheckLayout(t *testing.T, pods map[string]corev1.Pod) {
	t.Helper()
	layout := map[string][]int{}
	for name, p := range pods {
		layout[name] = cluster.SortedGpuIDs(t, p)
	}
	for _, name := range []string{"a-keep-0", "a-keep-1", "b-keep", "b-mid"} {
		ids := layout[name]
		if preemptIsland(ids[0]) != preemptIsland(ids[len(ids)-1]) {
			t.Fatalf("%s asked for one NVLink island and got GPUs %v (layout %v)", name, ids, layout)
		}
	}
	if preemptIsland(layout["a-low-0"][0]) == preemptIsland(layout["a-low-1"][0]) {
		t.Fatalf("both 1-GPU pods of island-a are on one island: layout %v", layout)
	}
	t.Logf("layout before preemption: %v", layout)
}

// preemptCheckSurvivors: every pod but the victim is the same pod (UID), still
// running and not being deleted. kube-scheduler gates the preemptor until
// all its deletions are sent, so a wrong victim would show here.
func preemptCheckSurvivors(t *testing.T, before, after map[string]corev1.Pod, victim string) {
	t.Helper()
	for name, old := range before {
		if name == victim {
			continue
		}
		now, ok := after[name]
		switch {
		case !ok:
			t.Errorf("pod %s (uid %s) was deleted; only %s had to go", name, old.UID, victim)
		case now.UID != old.UID:
			t.Errorf("pod %s is a new pod (uid %s, was %s)", name, now.UID, old.UID)
		case now.DeletionTimestamp != nil:
			t.Errorf("pod %s is being deleted; only %s had to go", name, victim)
		case !cluster.Running(&now):
			t.Errorf("pod %s is %s on %q, want Running", name, now.Status.Phase, now.Spec.NodeName)
		}
	}
}

// preemptCheckPreemptorGpus: the preemptor runs on island-b on GPUs the victim
// held, none of the survivor's.
func preemptCheckPreemptorGpus(t *testing.T, preemptor *corev1.Pod, before map[string]corev1.Pod) {
	t.Helper()
	if preemptor.Spec.NodeName != preemptNodeB {
		t.Fatalf("preemptor bound to %s, want %s", preemptor.Spec.NodeName, preemptNodeB)
	}
	ids := cluster.SortedGpuIDs(t, *preemptor)
	freed := cluster.SortedGpuIDs(t, before["b-mid"])
	kept := cluster.SortedGpuIDs(t, before["b-keep"])
	for _, id := range ids {
		if !slices.Contains(freed, id) || slices.Contains(kept, id) {
			t.Errorf("preemptor got GPUs %v; the victim freed %v and b-keep holds %v", ids, freed, kept)
			break
		}
	}
	if len(ids) != 2 {
		t.Errorf("preemptor got GPUs %v, want 2", ids)
	}
	t.Logf("preemptor on %s with GPUs %v (freed %v)", preemptor.Spec.NodeName, ids, freed)
}

// preemptCheckVerbUsed: kube-scheduler did call the preempt verb, offering
// both nodes, and gpusched kept one. Without that the test would prove
// nothing about gpusched.
func preemptCheckVerbUsed(t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	metrics, err := cp.GpuschedMetrics()
	if err != nil {
		t.Fatal(err)
	}
	if n := promtext.Parse(metrics).Sum("gpusched_extender_requests_total", map[string]string{"verb": "preempt", "code": "200"}); n < 1 {
		t.Errorf("gpusched answered %v preempt requests, want at least 1", n)
	}
	lines := preemptLogLines(t, cp)
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "proposed=2 kept=1") }) {
		t.Errorf("gpusched.log has no preempt call with both nodes proposed and one kept: %q", lines)
	}
}

func preemptLogLines(t *testing.T, cp *controlplane.ControlPlane) []string {
	t.Helper()
	lines, err := cluster.GrepLog(filepath.Join(cp.Dir, "gpusched.log"), "preempt pod="+preemptNamespace+"/preemptor")
	if err != nil {
		t.Error(err)
	}
	return lines
}
