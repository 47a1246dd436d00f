package suite_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/benchkit"
	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// BenchmarkGangTimeToBound measures, through the real kube-scheduler with
// the webhook's gate, the time from the last member of a gang created to
// every member bound, for gangs of each size in E2E_GANG_SIZES (default
// 8,64) of 1-GPU members, E2E_GANG_ROUNDS times (default 1), on
// E2E_GANG_NODES generated DGX H100 nodes (default 16). It splits that time
// in two: last created -> every gate lifted (the admission loop and its
// API writes) and gates lifted -> every member bound (kube-scheduler and
// gpusched's bind). Each round also creates the same pods in no queue
// (arm "unqueued"): kube-scheduler binding them alone is the floor under a
// gang's time on this machine. E2E_GANG_OUT names a JSON result file.
func BenchmarkGangTimeToBound(b *testing.B) {
	s := gangBenchSettingsFromEnv(b)
	policy := queuePolicy(b, map[string]int{"team-a": 8 * s.nodes}, nil)
	cp := controlplane.Start(b, controlplane.Options{Webhook: true, Policy: policy,
		Run: &controlplane.Components{Scheduler: true, Gpusched: true}})
	ctx := context.Background()
	client := benchkit.Client(b, cp)
	benchkit.CreateNodes(ctx, b, cp, client, s.nodes, 32)
	cluster.WaitGpuschedNodes(ctx, b, cp, s.nodes, 2*time.Minute)
	if err := controlplane.EnsureNamespace(ctx, client, cluster.Namespace); err != nil {
		b.Fatal(err)
	}
	report := gangBenchReport{Benchmark: "gang_time_to_bound", Nodes: s.nodes, TargetMs: map[string]float64{"64": 200},
		Conditions: map[string]any{"machine": benchkit.Machine(), "gpusched_args": "deploy/'s: --filter-keep-best=1, webhook gate",
			"pod_shape": "1 nvidia.com/gpu + 100m cpu, Kueue pod group (pod-group-name + total-count), gated by the webhook",
			"measure":   "last member's create returned -> every member seen ungated / bound by a pod watch"}}
	for _, size := range s.sizes {
		for round := 1; round <= s.rounds; round++ {
			for _, queued := range []bool{true, false} {
				before := benchkit.APIServerMetrics(ctx, b, cp)
				r := runGangRound(ctx, b, cp, client, size, queued, fmt.Sprintf("g%d-r%d", size, round))
				r.APIServerRequests = benchkit.APIServerRequests(before, benchkit.APIServerMetrics(ctx, b, cp))
				b.Logf("%s of %d, round %d: first gate lifted %.0f ms, all %.0f ms, all bound %.0f ms after the last member was created; "+
					"CPU meanwhile %v ms (%.0f %% of 2 cores); API requests %v",
					r.Arm, size, round, r.FirstUngatedMs, r.UngatedMs, r.BoundMs, r.CPUAfterLastCreatedMs,
					100*r.CPUShareOfTwoCores, r.APIServerRequests)
				report.Rounds = append(report.Rounds, r)
				benchkit.DeletePods(ctx, b, cp, client, cluster.Namespace)
			}
		}
	}
	if s.out != "" {
		benchkit.WriteJSONReport(b, s.out, report)
	}
}

type gangBenchSettings struct {
	sizes         []int
	rounds, nodes int
	out           string
}

func gangBenchSettingsFromEnv(b *testing.B) gangBenchSettings {
	s := gangBenchSettings{
		sizes:  benchkit.EnvInts(b, "E2E_GANG_SIZES", []int{8, 64}),
		rounds: benchkit.EnvInts(b, "E2E_GANG_ROUNDS", []int{1})[0],
		nodes:  benchkit.EnvInts(b, "E2E_GANG_NODES", []int{16})[0],
		out:    os.Getenv("E2E_GANG_OUT"),
	}
	for _, size := range s.sizes {
		if size <= 0 || size > 8*s.nodes || s.rounds <= 0 {
			b.Fatalf("E2E_GANG_SIZES=%v, E2E_GANG_ROUNDS=%d on %d nodes: want sizes of 1..8 x nodes",
				s.sizes, s.rounds, s.nodes)
		}
	}
	return s
}

type gangBenchReport struct {
	Benchmark  string             `json:"benchmark"`
	Nodes      int                `json:"nodes"`
	TargetMs   map[string]float64 `json:"target_ms"`
	Conditions map[string]any     `json:"conditions"`
	Rounds     []gangRound        `json:"rounds"`
}

type gangRound struct {
	// Arm is "gang" (a queued pod group, gated) or "unqueued" (the same
	// pods in no queue and no group: kube-scheduler's own pace, the floor
	// under the gang's time).
	Arm      string  `json:"arm"`
	Members  int     `json:"members"`
	CreateMs float64 `json:"create_ms"`
	// FirstUngatedMs is when the admission loop's first write landed: the
	// rest of UngatedMs is the writes of the other members.
	FirstUngatedMs float64 `json:"last_created_to_first_ungated_ms"`
	UngatedMs      float64 `json:"last_created_to_all_ungated_ms"`
	BoundMs        float64 `json:"last_created_to_all_bound_ms"`
	// APIServerRequests counts the round's requests by verb and resource
	// (codes other than 2xx apart), creations and the benchmark's own
	// list and watch included: a 409 on pods is an admission that patched
	// a stale copy.
	APIServerRequests map[string]float64 `json:"apiserver_requests"`
	// CPUAfterLastCreatedMs is the CPU each process used from the last
	// creation to every member bound (10 ms ticks), and CPUShareOfTwoCores
	// their sum over twice that time: near 1, the machine, not a wait,
	// sets the pace.
	CPUAfterLastCreatedMs map[string]float64 `json:"cpu_after_last_created_ms"`
	CPUShareOfTwoCores    float64            `json:"cpu_share_of_two_cores"`
}

// runGangRound creates the gang's members (queued) or the same pods in no
// queue from 16 workers while a watch records when each is first seen
// ungated and bound.
func runGangRound(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, client kubernetes.Interface,
	size int, queued bool, group string) gangRound {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	list, err := client.CoreV1().Pods(cluster.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	w, err := client.CoreV1().Pods(cluster.Namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	rec := newGangRecorder(size)
	go rec.follow(w)
	began := time.Now()
	arm, prefix := "gang", group
	if !queued {
		arm, prefix = "unqueued", "u"+group
	}
	err = cluster.Parallel(size, 16, func(i int) error {
		pod := cluster.GpuPod(fmt.Sprintf("%s-%d", prefix, i), 1)
		if queued {
			pod = pod.Label("kueue.x-k8s.io/queue-name", "team-a").
				Label("kueue.x-k8s.io/pod-group-name", group).
				Annotation("kueue.x-k8s.io/pod-group-total-count", fmt.Sprint(size))
		}
		_, err := pod.Create(ctx, client)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	lastCreated := time.Now()
	cpuBefore := benchkit.ProcessCPUMs(b, cp)
	firstUngated, ungated, bound := rec.wait(ctx)
	if ctx.Err() != nil {
		b.Fatalf("gang %s: not bound whole in 2 min", group)
	}
	cpuWall := time.Since(lastCreated)
	cpu, total := map[string]float64{}, 0.0
	for name, after := range benchkit.ProcessCPUMs(b, cp) {
		cpu[name] = after - cpuBefore[name]
		total += cpu[name]
	}
	return gangRound{Arm: arm, Members: size, CreateMs: ms(lastCreated.Sub(began)),
		FirstUngatedMs: ms(firstUngated.Sub(lastCreated)),
		UngatedMs:      ms(ungated.Sub(lastCreated)), BoundMs: ms(bound.Sub(lastCreated)),
		CPUAfterLastCreatedMs: cpu, CPUShareOfTwoCores: total / (2 * ms(cpuWall))}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// gangRecorder keeps, per member, when it was first seen without
// scheduling gates and with a node.
type gangRecorder struct {
	want           int
	mu             sync.Mutex
	ungated, bound map[string]time.Time
	done           chan struct{}
}

func newGangRecorder(want int) *gangRecorder {
	return &gangRecorder{want: want, ungated: map[string]time.Time{}, bound: map[string]time.Time{}, done: make(chan struct{})}
}

func (r *gangRecorder) follow(w watch.Interface) {
	for ev := range w.ResultChan() {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		now := time.Now()
		r.mu.Lock()
		if _, seen := r.ungated[pod.Name]; !seen && len(pod.Spec.SchedulingGates) == 0 {
			r.ungated[pod.Name] = now
		}
		if _, seen := r.bound[pod.Name]; !seen && pod.Spec.NodeName != "" {
			r.bound[pod.Name] = now
			if len(r.bound) == r.want {
				close(r.done)
			}
		}
		r.mu.Unlock()
	}
}

// wait returns when the first and the last member were ungated, and when
// the last was bound.
func (r *gangRecorder) wait(ctx context.Context) (firstUngated, ungated, bound time.Time) {
	select {
	case <-r.done:
	case <-ctx.Done():
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return earliest(r.ungated), latest(r.ungated), latest(r.bound)
}

func latest(times map[string]time.Time) time.Time {
	all := sortedTimes(times)
	if len(all) == 0 {
		return time.Time{}
	}
	return all[len(all)-1]
}

func earliest(times map[string]time.Time) time.Time {
	all := sortedTimes(times)
	if len(all) == 0 {
		return time.Time{}
	}
	return all[0]
}

func sortedTimes(times map[string]time.Time) []time.Time {
	all := make([]time.Time, 0, len(times))
	for _, t := range times {
		all = append(all, t)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Before(all[j]) })
	return all
}
