package suite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// Helpers of the placement tests (gpus_test.go, gpus_*_test.go and
// nodes_test.go).

const placementNamespace = "e2e"

// Waits of one scheduling decision, and of a burst settling.
const (
	bindTimeout   = 20 * time.Second
	settleTimeout = 45 * time.Second
	// pendingHold is how long a refused pod is watched after its first
	// FailedScheduling event: kube-scheduler retries a refused pod after
	// 1 s, then 2 s (backoff), so this spans retries.
	pendingHold = 3 * time.Second
)

// setUpDemoCluster registers the demo nodes, changed by edits first, and
// the test namespace, and returns the nodes as the API server has them.
func setUpDemoCluster(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, edits ...func(*corev1.Node)) []corev1.Node {
	t.Helper()
	nodes, err := cluster.DemoNodes(cp.Repo)
	if err != nil {
		t.Fatal(err)
	}
	for i := range nodes {
		for _, edit := range edits {
			edit(&nodes[i])
		}
	}
	if err := cluster.CreateNodes(ctx, cp.Client, nodes); err != nil {
		t.Fatal(err)
	}
	if err := controlplane.EnsureNamespace(ctx, cp.Client, placementNamespace); err != nil {
		t.Fatal(err)
	}
	_, created := mustListPodsAndNodes(ctx, t, cp.Client)
	return created
}

// gpuPod is a gpusched pod asking for whole GPUs.
func gpuPod(name string, gpus int) *cluster.PodBuilder {
	return cluster.NewPod(placementNamespace, name).SchedulerName(cluster.SchedulerName).Gpus(gpus)
}

// sharePod is a gpusched pod asking for milli thousandths of one GPU.
func sharePod(name string, milli int) *cluster.PodBuilder {
	return gpuPod(name, 1).Annotation(cluster.GpuMilliAnnotation, fmt.Sprint(milli))
}

// heldPod is a pod another scheduler bound to node, holding gpus GPUs,
// recorded in gpusched.io/gpu-ids when ids is not empty.
func heldPod(name, node string, gpus int, ids string) *cluster.PodBuilder {
	b := cluster.NewPod(placementNamespace, name).SchedulerName(cluster.DefaultScheduler).NodeName(node).Gpus(gpus)
	if ids != "" {
		b.Annotation(cluster.GpuIDsAnnotation, ids)
	}
	return b
}

// bindPinned creates the pod and waits until it is bound.
func bindPinned(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, b *cluster.PodBuilder) *corev1.Pod {
	t.Helper()
	created, err := b.Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cluster.WaitBound(ctx, cp.Client, created.Namespace, created.Name, bindTimeout)
	if err != nil {
		t.Fatalf("%v\ngpusched's view: %s", err, gpuschedView(cp, pinnedTo(created)...))
	}
	return pod
}

// pinnedTo is the node a pod's nodeSelector pins it to, if any.
func pinnedTo(pod *corev1.Pod) []string {
	if node, ok := pod.Spec.NodeSelector[cluster.HostnameLabel]; ok {
		return []string{node}
	}
	return nil
}

// refusedPinned waits for the pod's first FailedScheduling event, checks
// that it stays pending, and returns its latest FailedScheduling message.
func refusedPinned(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string) string {
	t.Helper()
	if _, err := cluster.WaitFailedScheduling(ctx, cp.Client, placementNamespace, name, bindTimeout); err != nil {
		t.Fatal(err)
	}
	if err := cluster.StaysPending(ctx, cp.Client, placementNamespace, name, pendingHold); err != nil {
		t.Fatalf("%v\ngpusched's view: %s", err, gpuschedView(cp))
	}
	messages, err := cluster.FailedSchedulingMessages(ctx, cp.Client, placementNamespace, name)
	if err != nil {
		t.Fatal(err)
	}
	return messages[len(messages)-1]
}

// waitProductSettled waits until, of the pods named prefix*, bound are
// bound and pending have a FailedScheduling event, and checks that the
// pending ones stay so.
func waitProductSettled(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, prefix string, bound, pending int) {
	t.Helper()
	var state string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, settleTimeout, true, func(ctx context.Context) (bool, error) {
		pods, _, err := listPodsAndNodes(ctx, cp.Client)
		if err != nil {
			return false, nil
		}
		reasons, err := cluster.FailedSchedulingByPod(ctx, cp.Client, placementNamespace)
		if err != nil {
			return false, nil
		}
		var b, p int
		var lines []string
		for i := range pods {
			pod := &pods[i]
			if !strings.HasPrefix(pod.Name, prefix) {
				continue
			}
			lines = append(lines, fmt.Sprintf("%s node=%q reason=%q", pod.Name, pod.Spec.NodeName, reasons[pod.Name]))
			if cluster.Bound(pod) {
				b++
			} else if reasons[pod.Name] != "" {
				p++
			}
		}
		state = strings.Join(lines, "\n  ")
		return b == bound && p == pending, nil
	})
	if err != nil {
		t.Fatalf("%s*: want %d bound and %d refused: %v\n  %s", prefix, bound, pending, err, state)
	}
	t.Logf("%s*:\n  %s", prefix, state)
}

// checkDevicesOnEveryNode applies NodeGpuUse.CheckDevices to every node.
func checkDevicesOnEveryNode(t *testing.T, cp *controlplane.ControlPlane, nodes []corev1.Node, pods []corev1.Pod) {
	t.Helper()
	use := cluster.GpuUse(nodes, pods)
	var problems, broken []string
	for _, n := range nodes {
		if found := use[n.Name].CheckDevices(); len(found) > 0 {
			problems = append(problems, found...)
			broken = append(broken, n.Name)
		}
	}
	for i := range pods {
		if p := &pods[i]; cluster.Bound(p) && use[p.Spec.NodeName] == nil {
			problems = append(problems, fmt.Sprintf("%s bound to %s, which is not a node", p.Name, p.Spec.NodeName))
		}
	}
	if len(problems) > 0 {
		t.Errorf("device assignments broken:\n  %s\ngpusched's view: %s", strings.Join(problems, "\n  "), gpuschedView(cp, broken...))
	}
}

func listPodsAndNodes(ctx context.Context, client kubernetes.Interface) ([]corev1.Pod, []corev1.Node, error) {
	pods, err := client.CoreV1().Pods(placementNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	return pods.Items, nodes.Items, nil
}

func mustListPodsAndNodes(ctx context.Context, t *testing.T, client kubernetes.Interface) ([]corev1.Pod, []corev1.Node) {
	t.Helper()
	pods, nodes, err := listPodsAndNodes(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	return pods, nodes
}

// gpuschedView summarises gpusched's GET /v1/nodes for the named nodes
// (all when none are named): a diagnostic for failure messages only, never
// a verdict.
func gpuschedView(cp *controlplane.ControlPlane, names ...string) string {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(cp.GpuschedURL + "/v1/nodes")
	if err != nil {
		return fmt.Sprintf("(GET /v1/nodes: %v)", err)
	}
	defer resp.Body.Close()
	var view struct {
		Nodes []struct {
			Name     string
			Topology struct{ Source string }
			Gpus     []struct {
				Index   int
				Healthy bool
			}
			Pods []struct {
				Name        string
				GpuIds      []int
				MilliPerGpu int
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&view); err != nil {
		return fmt.Sprintf("(GET /v1/nodes: %v)", err)
	}
	var b strings.Builder
	for _, n := range view.Nodes {
		if len(names) > 0 && !slices.Contains(names, n.Name) {
			continue
		}
		var unhealthy []int
		for _, g := range n.Gpus {
			if !g.Healthy {
				unhealthy = append(unhealthy, g.Index)
			}
		}
		fmt.Fprintf(&b, "\n  %s (topology: %s; unhealthy GPUs %v):", n.Name, n.Topology.Source, unhealthy)
		for _, p := range n.Pods {
			fmt.Fprintf(&b, " %s=%v@%d", p.Name, p.GpuIds, p.MilliPerGpu)
		}
	}
	return b.String()
}
