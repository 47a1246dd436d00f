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
	"k8s.io/apimachinery/pkg/types"
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
// (arm "unqueued"): kube-scheduler binding them as they come, and the same
// pods held by a gate of the benchmark's own that it lifts itself, 16
// PATCHes in flight as gpusched's writer keeps (arm "ungate_floor"): the
// API writes any gate-lifting admission controller makes and kube-scheduler
// binding what it lifts, with no decision in between, which is the floor
// under a gang's time on this machine (E2E_FLOOR_IN_FLIGHT sets how many
// PATCHes at once). E2E_GANG_OUT names a JSON result file; E2E_GANG_PPROF
// a folder for a 1 s CPU profile of kube-apiserver from each round's last
// creation (`go tool pprof -top`), which is where a gang's time goes.
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
			for _, arm := range []gangArm{armGang, armUnqueued, armUngateFloor, armWriteFloor} {
				before := benchkit.APIServerMetrics(ctx, b, cp)
				r := runGangRound(ctx, b, cp, client, size, arm, fmt.Sprintf("g%d-r%d", size, round))
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

// gangArm is how a round's pods reach kube-scheduler.
type gangArm string

const (
	// A queued pod group, gated by the webhook and admitted by gpusched.
	armGang gangArm = "gang"
	// The same pods in no queue and no group: bound as they are created.
	armUnqueued gangArm = "unqueued"
	// The same pods in no queue, created behind the benchmark's own gate,
	// which it lifts from all of them once the last is created.
	armUngateFloor gangArm = "ungate_floor"
	// The same pods behind the benchmark's gate and named to a scheduler
	// nobody runs: the benchmark lifts each gate and binds the pod itself,
	// the two API writes a gated pod needs and nothing else (no scheduling
	// cycle, no extender call, no decision).
	armWriteFloor gangArm = "write_floor"
)

// writeFloorScheduler is a scheduler name nothing serves, so that only the
// benchmark binds the write_floor arm's pods.
const writeFloorScheduler = "bench-nobody"

// floorGate holds the ungate_floor arm's pods until the benchmark lifts it.
const floorGate = "bench.gpusched.io/hold"

type gangRound struct {
	Arm      gangArm `json:"arm"`
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

// runGangRound creates the round's pods from 16 workers while a watch
// records when each is first seen ungated and bound; in the ungate_floor
// arm it then lifts their gates, 16 at a time.
func runGangRound(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, client kubernetes.Interface,
	size int, arm gangArm, group string) gangRound {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	list, err := client.CoreV1().Pods(cluster.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	rec := newGangRecorder(size)
	go rec.follow(ctx, client, list.ResourceVersion)
	began := time.Now()
	if err := cluster.Parallel(size, 16, func(i int) error {
		_, err := gangArmPod(arm, group, size, i).Create(ctx, client)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	lastCreated := time.Now()
	cpuBefore := benchkit.ProcessCPUMs(b, cp)
	if dir := os.Getenv("E2E_GANG_PPROF"); dir != "" {
		defer benchkit.ProfileAPIServer(cp, 1, fmt.Sprintf("%s/%s-%s.pprof", dir, arm, group), b.Logf)()
	}
	switch arm {
	case armUngateFloor:
		liftFloorGates(ctx, b, client, arm, group, size, nil)
	case armWriteFloor:
		liftFloorGates(ctx, b, client, arm, group, size, func(name string, i int) error {
			return bindToBenchNode(ctx, client, name, i)
		})
	}
	firstUngated, ungated, bound := rec.wait(ctx)
	if ctx.Err() != nil {
		b.Fatalf("%s %s: not bound whole in 2 min", arm, group)
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

// gangArmPod is member i of the round's pods in the arm.
func gangArmPod(arm gangArm, group string, size, i int) *cluster.PodBuilder {
	switch arm {
	case armGang:
		return cluster.GpuPod(fmt.Sprintf("%s-%d", group, i), 1).
			Label("kueue.x-k8s.io/queue-name", "team-a").
			Label("kueue.x-k8s.io/pod-group-name", group).
			Annotation("kueue.x-k8s.io/pod-group-total-count", fmt.Sprint(size))
	case armUngateFloor:
		return cluster.GpuPod(fmt.Sprintf("f%s-%d", group, i), 1).SchedulingGate(floorGate)
	case armWriteFloor:
		return cluster.GpuPod(fmt.Sprintf("w%s-%d", group, i), 1).SchedulingGate(floorGate).
			SchedulerName(writeFloorScheduler)
	default:
		return cluster.GpuPod(fmt.Sprintf("u%s-%d", group, i), 1)
	}
}

// liftFloorGates removes the benchmark's gate from every pod of the round
// with the merge PATCH an admission controller sends, 16 in flight unless
// E2E_FLOOR_IN_FLIGHT says otherwise; then, if `then` is given, calls it
// for the pod in the same worker.
func liftFloorGates(ctx context.Context, b *testing.B, client kubernetes.Interface, arm gangArm, group string, size int,
	then func(name string, i int) error) {
	patch := []byte(`{"spec":{"schedulingGates":null}}`)
	if err := cluster.Parallel(size, benchkit.EnvInts(b, "E2E_FLOOR_IN_FLIGHT", []int{16})[0], func(i int) error {
		name := gangArmPod(arm, group, size, i).Build().Name
		_, err := client.CoreV1().Pods(cluster.Namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err == nil && then != nil {
			err = then(name, i)
		}
		return err
	}); err != nil {
		b.Fatal(err)
	}
}

// bindToBenchNode binds member i to the generated node i/8 (8 GPUs each),
// as a scheduler's Binding does.
func bindToBenchNode(ctx context.Context, client kubernetes.Interface, name string, i int) error {
	node := benchkit.NodeName(i / 8)
	return client.CoreV1().Pods(cluster.Namespace).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster.Namespace},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{})
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

// follow watches the namespace's pods from resourceVersion until ctx ends
// or every pod is bound, watching again from the last event when the API
// server ends the stream (a busy one closes watches it finds slow).
func (r *gangRecorder) follow(ctx context.Context, client kubernetes.Interface, resourceVersion string) {
	for ctx.Err() == nil {
		select {
		case <-r.done:
			return
		default:
		}
		w, err := client.CoreV1().Pods(cluster.Namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: resourceVersion})
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		resourceVersion = r.drain(w, resourceVersion)
		w.Stop()
	}
}

// drain records the watch's events until it ends; returns the last
// resourceVersion seen.
func (r *gangRecorder) drain(w watch.Interface, resourceVersion string) string {
	for ev := range w.ResultChan() {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		resourceVersion = pod.ResourceVersion
		r.record(pod, time.Now())
	}
	return resourceVersion
}

func (r *gangRecorder) record(pod *corev1.Pod, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, seen := r.ungated[pod.Name]; !seen && len(pod.Spec.SchedulingGates) == 0 {
		r.ungated[pod.Name] = now
	}
	if _, seen := r.bound[pod.Name]; !seen && pod.Spec.NodeName != "" {
		r.bound[pod.Name] = now
		if len(r.bound) == r.want {
			close(r.done)
		}
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
