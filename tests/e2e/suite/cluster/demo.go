package cluster

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/controlplane"
)

// Namespace is the namespace of the tests' pods; SetUpDemoCluster creates
// it.
const Namespace = "e2e"

// Waits of one scheduling decision, and of a burst settling.
const (
	BindTimeout   = 20 * time.Second
	SettleTimeout = 45 * time.Second
	// pendingHold is how long a refused pod is watched after its first
	// FailedScheduling event: kube-scheduler retries a refused pod after
	// 1 s, then 2 s (backoff), so this spans retries.
	pendingHold = 3 * time.Second
)

// CreateDemoCluster registers the demo nodes, changed by edits first, and
// creates Namespace.
func CreateDemoCluster(ctx context.Context, tb testing.TB, cp *controlplane.ControlPlane, edits ...func(*corev1.Node)) {
	tb.Helper()
	nodes, err := DemoNodes(cp.Repo)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range nodes {
		for _, edit := range edits {
			edit(&nodes[i])
		}
	}
	if err := CreateNodes(ctx, cp.Client, nodes); err != nil {
		tb.Fatal(err)
	}
	if err := controlplane.EnsureNamespace(ctx, cp.Client, Namespace); err != nil {
		tb.Fatal(err)
	}
}

// SetUpDemoCluster is CreateDemoCluster, then returns the nodes as the API
// server has them.
func SetUpDemoCluster(ctx context.Context, tb testing.TB, cp *controlplane.ControlPlane, edits ...func(*corev1.Node)) []corev1.Node {
	tb.Helper()
	CreateDemoCluster(ctx, tb, cp, edits...)
	_, created := MustListPodsAndNodes(ctx, tb, cp.Client)
	return created
}

// GpuPod is a gpusched pod in Namespace asking for whole GPUs.
func GpuPod(name string, gpus int) *PodBuilder {
	return NewPod(Namespace, name).SchedulerName(SchedulerName).Gpus(gpus)
}

// SharePod is a gpusched pod asking for milli thousandths of one GPU.
func SharePod(name string, milli int) *PodBuilder {
	return GpuPod(name, 1).Annotation(GpuMilliAnnotation, fmt.Sprint(milli))
}

// HeldPod is a pod another scheduler bound to node, holding gpus GPUs,
// recorded in gpusched.io/gpu-ids when ids is not empty.
func HeldPod(name, node string, gpus int, ids string) *PodBuilder {
	b := NewPod(Namespace, name).SchedulerName(DefaultScheduler).NodeName(node).Gpus(gpus)
	if ids != "" {
		b.Annotation(GpuIDsAnnotation, ids)
	}
	return b
}

// ListPodsAndNodes lists the pods of Namespace, by name, and every node.
func ListPodsAndNodes(ctx context.Context, client kubernetes.Interface) ([]corev1.Pod, []corev1.Node, error) {
	pods, err := client.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{})
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

// MustListPodsAndNodes is ListPodsAndNodes, failing the test on an error.
func MustListPodsAndNodes(ctx context.Context, tb testing.TB, client kubernetes.Interface) ([]corev1.Pod, []corev1.Node) {
	tb.Helper()
	pods, nodes, err := ListPodsAndNodes(ctx, client)
	if err != nil {
		tb.Fatal(err)
	}
	return pods, nodes
}
