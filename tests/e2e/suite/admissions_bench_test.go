package suite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"gpusched.io/e2e/suite/benchkit"
	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// BenchmarkAdmissionsLiveVsSimulator compares the admission rate of the
// same queueing core driven two ways, on the same nodes, policy and pods:
//   - live: gpusched serve against the real control plane, the webhook
//     gating every pod. All pods are created while their queue has no
//     quota (so they wait, gated); then the policy file gets the quota and
//     the whole backlog is admitted. The rate is pods over the time from the
//     first gate lifted to the last (the admission pass and one API write
//     per pod), and also to the last bound (kube-scheduler and bind);
//   - simulator: `gpusched simulate` of a scenario holding the same Node
//     objects, the same policy and the same pods at t=0, timed by the
//     report's own wallSeconds (the engine's time, no API).
//
// Sizes: E2E_ADMIT_NODES DGX H100 nodes (default 16), E2E_ADMIT_SINGLES
// single-GPU pods (default 64) and E2E_ADMIT_GANGS gangs of 8 single-GPU
// members (default 8); they must fit the nodes' GPUs at once.
// E2E_ADMIT_OUT names a JSON result file.
func BenchmarkAdmissionsLiveVsSimulator(b *testing.B) {
	s := admitBenchSettingsFromEnv(b)
	dir := b.TempDir()
	policyFile := filepath.Join(dir, "policy.yaml")
	copyFile(b, queuePolicy(b, map[string]int{"team-a": 0}, nil), policyFile)
	cp := controlplane.Start(b, controlplane.Options{Webhook: true, Policy: policyFile,
		Run: &controlplane.Components{Scheduler: true, Gpusched: true}})
	ctx := context.Background()
	client := benchkit.Client(b, cp)
	benchkit.CreateNodes(ctx, b, cp, client, s.nodes, 32)
	cluster.WaitGpuschedNodes(ctx, b, cp, s.nodes, 2*time.Minute)
	if err := controlplane.EnsureNamespace(ctx, client, cluster.Namespace); err != nil {
		b.Fatal(err)
	}
	pods := admitBenchPods(s)
	if err := cluster.Parallel(len(pods), 16, func(i int) error {
		_, err := client.CoreV1().Pods(cluster.Namespace).Create(ctx, pods[i], metav1.CreateOptions{})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	live := admitLive(ctx, b, client, policyFile, len(pods), queuePolicy(b, map[string]int{"team-a": 8 * s.nodes}, nil))
	sim := admitSimulate(ctx, b, cp, client, dir, policyFile, pods)
	report := admitBenchReport{Benchmark: "admissions_live_vs_simulator", Nodes: s.nodes, Pods: len(pods),
		Singles: s.singles, Gangs: s.gangs, GangSize: admitGangSize, Live: live, Simulator: sim,
		Conditions: map[string]any{"machine": benchkit.Machine(),
			"live":      "webhook gate on, --filter-keep-best=1 (deploy/'s), no kubelet; quota given by rewriting --policy",
			"simulator": "gpusched simulate, same Node objects, policy and pods at t=0; rate from the report's wallSeconds"}}
	if sim.PodsPerSecond > 0 {
		report.LiveOverSimulator = live.AdmittedPerSecond / sim.PodsPerSecond
	}
	b.Logf("live: %d pods admitted in %.1f ms (%.0f/s), bound %.1f ms after the first admission; simulator: %.1f ms (%.0f/s)",
		len(pods), live.FirstToLastAdmittedMs, live.AdmittedPerSecond, live.FirstAdmittedToLastBoundMs,
		sim.WallMs, sim.PodsPerSecond)
	if s.out != "" {
		benchkit.WriteJSONReport(b, s.out, report)
	}
}

const admitGangSize = 8

type admitBenchSettings struct {
	nodes, singles, gangs int
	out                   string
}

func admitBenchSettingsFromEnv(b *testing.B) admitBenchSettings {
	s := admitBenchSettings{
		nodes:   benchkit.EnvInts(b, "E2E_ADMIT_NODES", []int{16})[0],
		singles: benchkit.EnvInts(b, "E2E_ADMIT_SINGLES", []int{64})[0],
		gangs:   benchkit.EnvInts(b, "E2E_ADMIT_GANGS", []int{8})[0],
		out:     os.Getenv("E2E_ADMIT_OUT"),
	}
	if s.singles < 0 || s.gangs < 0 || s.singles+admitGangSize*s.gangs > 8*s.nodes || s.singles+s.gangs == 0 {
		b.Fatalf("%d single pods and %d gangs of %d on %d nodes: want at least one, fitting 8 GPUs a node",
			s.singles, s.gangs, admitGangSize, s.nodes)
	}
	return s
}

type admitBenchReport struct {
	Benchmark         string         `json:"benchmark"`
	Nodes             int            `json:"nodes"`
	Pods              int            `json:"pods"`
	Singles           int            `json:"single_gpu_pods"`
	Gangs             int            `json:"gangs"`
	GangSize          int            `json:"gang_size"`
	Conditions        map[string]any `json:"conditions"`
	Live              admitLiveArm   `json:"live"`
	Simulator         admitSimArm    `json:"simulator"`
	LiveOverSimulator float64        `json:"live_over_simulator"`
}

type admitLiveArm struct {
	PolicyToFirstAdmittedMs    float64 `json:"policy_written_to_first_admitted_ms"`
	FirstToLastAdmittedMs      float64 `json:"first_to_last_admitted_ms"`
	FirstAdmittedToLastBoundMs float64 `json:"first_admitted_to_last_bound_ms"`
	AdmittedPerSecond          float64 `json:"admitted_per_second"`
	BoundPerSecond             float64 `json:"bound_per_second"`
}

type admitSimArm struct {
	WallMs        float64 `json:"wall_ms"`
	Admitted      int     `json:"admitted_pods"`
	PodsPerSecond float64 `json:"pods_per_second"`
}

// admitBenchPods: the single-GPU pods and gang members of team-a.
func admitBenchPods(s admitBenchSettings) []*corev1.Pod {
	var pods []*corev1.Pod
	for i := range s.singles {
		pods = append(pods, cluster.GpuPod(fmt.Sprintf("single-%03d", i), 1).
			Label("kueue.x-k8s.io/queue-name", "team-a").Build())
	}
	for g := range s.gangs {
		for m := range admitGangSize {
			pods = append(pods, cluster.GpuPod(fmt.Sprintf("gang-%02d-%d", g, m), 1).
				Label("kueue.x-k8s.io/queue-name", "team-a").
				Label("kueue.x-k8s.io/pod-group-name", fmt.Sprintf("gang-%02d", g)).
				Annotation("kueue.x-k8s.io/pod-group-total-count", fmt.Sprint(admitGangSize)).Build())
		}
	}
	return pods
}

// admitLive waits until all n pods wait gated, then gives the queue its
// quota by rewriting the policy file, and times the gates lifted and the
// pods bound from a watch.
func admitLive(ctx context.Context, b *testing.B, client kubernetes.Interface, policyFile string, n int, quota string) admitLiveArm {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var rv string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods(cluster.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		rv = list.ResourceVersion
		gated := 0
		for i := range list.Items {
			if len(list.Items[i].Spec.SchedulingGates) > 0 && list.Items[i].Spec.NodeName == "" {
				gated++
			}
		}
		return gated == n, nil
	})
	if err != nil {
		b.Fatalf("not all %d pods wait gated: %v", n, err)
	}
	rec := newGangRecorder(n)
	go rec.follow(ctx, client, rv)
	written := time.Now()
	copyFile(b, quota, policyFile)
	if _, _, bound := rec.wait(ctx); bound.IsZero() {
		b.Fatalf("the backlog of %d pods was not admitted and bound in 3 min", n)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	first, last := earliest(rec.ungated), latest(rec.ungated)
	arm := admitLiveArm{PolicyToFirstAdmittedMs: ms(first.Sub(written)), FirstToLastAdmittedMs: ms(last.Sub(first)),
		FirstAdmittedToLastBoundMs: ms(latest(rec.bound).Sub(first))}
	arm.AdmittedPerSecond = float64(n) / max(last.Sub(first).Seconds(), 1e-3)
	arm.BoundPerSecond = float64(n) / max(latest(rec.bound).Sub(first).Seconds(), 1e-3)
	return arm
}

// admitSimulate runs `gpusched simulate` on a scenario of the cluster's
// Node objects, the policy with quota and the pods created at 0s.
func admitSimulate(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, client kubernetes.Interface,
	dir, policyFile string, pods []*corev1.Pod) admitSimArm {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	scenario := map[string]any{
		"apiVersion": "gpusched.io/v1alpha1", "kind": "Scenario",
		"nodes": admitTyped(b, nodes.Items, "Node"), "policy": filepath.Base(policyFile), "until": "10s",
		"events": []any{map[string]any{"at": "0s", "create": admitTyped(b, pods, "Pod")}},
	}
	text, err := yaml.Marshal(scenario)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "scenario.yaml")
	if err := os.WriteFile(path, text, 0o644); err != nil {
		b.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, cp.Bins.Gpusched, "simulate", path).Output()
	if err != nil {
		b.Fatalf("gpusched simulate %s: %v", path, err)
	}
	var report struct {
		Summary struct {
			WallSeconds float64 `json:"wallSeconds"`
		} `json:"summary"`
		Workloads []struct {
			State      string            `json:"state"`
			Placements map[string]string `json:"placements"`
		} `json:"workloads"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		b.Fatalf("simulate report: %v", err)
	}
	arm := admitSimArm{WallMs: report.Summary.WallSeconds * 1000}
	for _, w := range report.Workloads {
		if w.State == "Admitted" {
			arm.Admitted += len(w.Placements)
		}
	}
	if arm.Admitted != len(pods) {
		b.Fatalf("the simulator admitted %d of the %d pods the live arm admitted", arm.Admitted, len(pods))
	}
	arm.PodsPerSecond = float64(arm.Admitted) / max(report.Summary.WallSeconds, 1e-6)
	return arm
}

// admitTyped turns API objects into plain maps with apiVersion and kind,
// as a scenario file holds them (the typed client leaves both empty).
func admitTyped[T any](b *testing.B, objects []T, kind string) []any {
	out := make([]any, 0, len(objects))
	for i := range objects {
		raw, err := json.Marshal(objects[i])
		if err != nil {
			b.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			b.Fatal(err)
		}
		m["apiVersion"], m["kind"] = "v1", kind
		if meta, ok := m["metadata"].(map[string]any); ok {
			delete(meta, "managedFields")
		}
		out = append(out, m)
	}
	return out
}

func copyFile(b testing.TB, from, to string) {
	b.Helper()
	text, err := os.ReadFile(from)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(to, text, 0o644); err != nil {
		b.Fatal(err)
	}
}
