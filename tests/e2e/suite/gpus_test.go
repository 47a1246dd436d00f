package suite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// TestFourGpuPodGetsOneWholeNvlinkIsland puts a 4-GPU pod on a node with
// two NVLink islands of four, one GPU of which is taken: it must get the
// whole free island.
//
// The islands are the even and the odd GPUs, and GPU 0 is held. A
// lowest-index allocator would give 1,2,3,4, straddling both islands;
// gpusched's default topology (what it uses if it ignored the
// annotation: NVSwitch all-to-all, NUMA halves 0-3 and 4-7) would give
// 4,5,6,7. Only a choice by the annotation's links gives 1,3,5,7: six
// NV12 pairs against at most three for any other set.
func TestFourGpuPodGetsOneWholeNvlinkIsland(t *testing.T) {
	// gpusched starts after the held pod exists, so its first list has
	// it: no race between its pod watch and the 4-GPU pod's filter.
	cp := controlplane.Start(t, controlplane.Options{Run: &controlplane.Components{Scheduler: true, Kubelet: true}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nodes := cluster.SetUpDemoCluster(ctx, t, cp)
	const nodeName = "nvlink-islands-0"
	islands := [][]int{{0, 2, 4, 6}, {1, 3, 5, 7}}
	node := cluster.CopyNode(cluster.NodeNamed(nodes, "dgx-h100-3"), nodeName)
	node.Annotations[cluster.GpuTopologyAnnotation] = islandTopology(t, 8, islands, []int{0, 0, 0, 0, 1, 1, 1, 1})
	if _, err := cluster.CreateNode(ctx, cp.Client, node); err != nil {
		t.Fatal(err)
	}
	// Another scheduler's pod holds GPU 0 (of the even island).
	_, err := cluster.HeldPod("held-gpu-0", nodeName, 1, "0").Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
	cp.StartGpusched()

	pod := cluster.BindPinned(ctx, t, cp, cluster.GpuPod("four-gpus", 4).NodeSelector(cluster.HostnameLabel, nodeName))
	ids, err := cluster.GpuIDs(pod)
	if err != nil {
		t.Fatal(err)
	}
	if want := islands[1]; !slices.Equal(ids, want) {
		t.Errorf("4-GPU pod got GPUs %v; want the whole free NVLink island %v (topology %s)\ngpusched's view: %s",
			ids, want, node.Annotations[cluster.GpuTopologyAnnotation], cluster.GpuschedView(cp, nodeName))
	}
}

// islandTopology is the compact JSON topology of n GPUs (README "How
// gpusched sees GPUs"): NV12 inside each island; between islands NODE on
// the same NUMA node and SYS across NUMA nodes, as nvidia-smi names them.
func islandTopology(t *testing.T, n int, islands [][]int, numa []int) string {
	t.Helper()
	island := make([]int, n)
	for i, members := range islands {
		for _, gpu := range members {
			island[gpu] = i
		}
	}
	links := make([][]string, n)
	for a := range n {
		links[a] = make([]string, n)
		for b := range n {
			switch {
			case a == b:
				links[a][b] = "X"
			case island[a] == island[b]:
				links[a][b] = "NV12"
			case numa[a] == numa[b]:
				links[a][b] = "NODE"
			default:
				links[a][b] = "SYS"
			}
		}
	}
	text, err := json.Marshal(map[string]any{"links": links, "numa": numa})
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// TestGpusHeldByAnotherSchedulersPodsCountAsUsed: pods another scheduler
// bound (spec.nodeName set at creation), some with gpusched.io/gpu-ids and
// some without, hold GPUs that gpusched must not give out again.
//
// dgx-h100-1 (8 GPUs): an unannotated 2-GPU pod, then a 4-GPU pod recorded
// on GPUs 0-3, so 2 GPUs are left: a 3-GPU pod pinned there stays pending,
// a 2-GPU pod binds to GPUs outside 0-3. gpusched learns the unannotated
// pod first and must not let its guess of that pod's GPUs displace the
// recorded GPUs 0-3.
//
// l4-1 (4 L4s shared 4 ways, 16 replicas): four 3-replica pods recorded on
// GPUs 0,1,2 fill those GPUs; kube-scheduler sees 4 replicas free, but
// only GPU 3 has any, so a 2-replica pod (two different GPUs) is refused
// by gpusched, naming how many GPUs have a replica free, and a 1-replica
// pod gets GPU 3.
func TestGpusHeldByAnotherSchedulersPodsCountAsUsed(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	held := []*cluster.PodBuilder{
		cluster.HeldPod("held-a-unannotated", "dgx-h100-1", 2, ""),
		cluster.HeldPod("held-b-gpus-0-3", "dgx-h100-1", 4, "0,1,2,3"),
	}
	for i := range 4 {
		held = append(held, cluster.HeldPod(fmt.Sprintf("held-c-replicas-%d", i), "l4-1", 3, "0,1,2"))
	}
	// Created one by one while gpusched runs: its pod watch delivers them
	// in this order (its first list would give them in UID order). They
	// are Running, which the fake kubelet writes after its own watch saw
	// them, before any gpusched pod exists.
	for _, b := range held {
		if _, err := b.Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
	}
	allRunning := func(pods []corev1.Pod) bool {
		return len(pods) == len(held) && !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return !cluster.Running(&p) })
	}
	if _, err := cluster.WaitForPods(ctx, cp.Client, cluster.Namespace, allRunning, cluster.BindTimeout); err != nil {
		t.Fatal(err)
	}

	checkHeldWholeGpus(ctx, t, cp)
	checkHeldReplicas(ctx, t, cp)
}

func checkHeldWholeGpus(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	tooMany := cluster.GpuPod("h100-three", 3).NodeSelector(cluster.HostnameLabel, "dgx-h100-1")
	if _, err := tooMany.Create(ctx, cp.Client); err != nil {
		t.Fatal(err)
	}
	fits := cluster.BindPinned(ctx, t, cp, cluster.GpuPod("h100-two", 2).NodeSelector(cluster.HostnameLabel, "dgx-h100-1"))
	if ids, _ := cluster.GpuIDs(fits); slices.ContainsFunc(ids, func(id int) bool { return id <= 3 }) {
		t.Errorf("h100-two got GPUs %v on %s; GPUs 0-3 are held by held-b-gpus-0-3\ngpusched's view: %s",
			ids, fits.Spec.NodeName, cluster.GpuschedView(cp, "dgx-h100-1"))
	}
	// kube-scheduler counts the held pods' requests itself, so the refusal
	// may be its own ("Insufficient nvidia.com/gpu") or gpusched's.
	reason := cluster.RefusedPinned(ctx, t, cp, "h100-three")
	if !strings.Contains(reason, "Insufficient nvidia.com/gpu") && !strings.Contains(reason, "needs 3 nvidia.com/gpu; 0 free") {
		t.Errorf("h100-three: FailedScheduling %q names no lack of nvidia.com/gpu", reason)
	}
}

func checkHeldReplicas(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	two := cluster.GpuPod("l4-two-replicas", 2).NodeSelector(cluster.HostnameLabel, "l4-1")
	if _, err := two.Create(ctx, cp.Client); err != nil {
		t.Fatal(err)
	}
	one := cluster.BindPinned(ctx, t, cp, cluster.GpuPod("l4-one-replica", 1).NodeSelector(cluster.HostnameLabel, "l4-1"))
	if ids, _ := cluster.GpuIDs(one); !slices.Equal(ids, []int{3}) {
		t.Errorf("l4-one-replica got GPUs %v; GPUs 0-2 are full, want [3]\ngpusched's view: %s", ids, cluster.GpuschedView(cp, "l4-1"))
	}
	const want = "needs 2 nvidia.com/gpu replicas (250 milli-GPU each, on different GPUs); 1 GPUs have a replica free"
	if reason := cluster.RefusedPinned(ctx, t, cp, "l4-two-replicas"); !strings.Contains(reason, want) {
		t.Errorf("l4-two-replicas: FailedScheduling %q; want gpusched's %q", reason, want)
	}
	pods, nodes := cluster.MustListPodsAndNodes(ctx, t, cp.Client)
	cluster.CheckDevicesOnEveryNode(t, cp, nodes, pods)
}
