package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/controlplane"
)

// Pods and waits of the fault and preemption tests (faults_test.go,
// preempt_test.go, preempt_gang_test.go), in Namespace. The waits keep
// polling through API server errors: these tests restart components.

// CreatePods creates <prefix>-<i> asking for sizes[i] GPUs and returns
// their names.
func CreatePods(ctx context.Context, tb testing.TB, client kubernetes.Interface, prefix string, sizes []int) []string {
	tb.Helper()
	var names []string
	for i, gpus := range sizes {
		name := fmt.Sprintf("%s-%d", prefix, i)
		if _, err := GpuPod(name, gpus).Create(ctx, client); err != nil {
			tb.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

// RunPinned creates 4-GPU pods pinned to a node and waits until they run.
func RunPinned(ctx context.Context, tb testing.TB, cp *controlplane.ControlPlane, node string, names ...string) []corev1.Pod {
	tb.Helper()
	for _, name := range names {
		if _, err := GpuPod(name, 4).NodeSelector(HostnameLabel, node).Create(ctx, cp.Client); err != nil {
			tb.Fatal(err)
		}
	}
	var pods []corev1.Pod
	for _, name := range names {
		pod, err := WaitRunning(ctx, cp.Client, Namespace, name, 30*time.Second)
		if err != nil {
			tb.Fatal(err)
		}
		pods = append(pods, *pod)
	}
	return pods
}

// DeleteAndWaitGone deletes a pod and waits until it is gone (the fake
// kubelet ends it).
func DeleteAndWaitGone(ctx context.Context, tb testing.TB, client kubernetes.Interface, name string) {
	tb.Helper()
	pod, err := client.CoreV1().Pods(Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	if err := client.CoreV1().Pods(Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		tb.Fatal(err)
	}
	WaitGone(ctx, tb, client, *pod)
}

// PodsByName lists the pods of namespace by name.
func PodsByName(ctx context.Context, tb testing.TB, client kubernetes.Interface, namespace string) map[string]corev1.Pod {
	tb.Helper()
	list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	pods := map[string]corev1.Pod{}
	for _, p := range list.Items {
		pods[p.Name] = p
	}
	return pods
}

// SortedGpuIDs is the pod's gpu-ids, sorted.
func SortedGpuIDs(tb testing.TB, pod corev1.Pod) []int {
	tb.Helper()
	ids, err := GpuIDs(&pod)
	if err != nil {
		tb.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

// WaitGone waits until the pod (this UID) no longer exists.
func WaitGone(ctx context.Context, tb testing.TB, client kubernetes.Interface, pod corev1.Pod) {
	tb.Helper()
	gone := func(pods []corev1.Pod) bool {
		return !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.UID == pod.UID })
	}
	if _, err := WaitForPods(ctx, client, pod.Namespace, gone, 20*time.Second); err != nil {
		tb.Fatalf("pod %s was never deleted: %v", pod.Name, err)
	}
}

// WaitFailedSchedulingContaining waits for a FailedScheduling event of
// pod (in Namespace) whose message contains want.
func WaitFailedSchedulingContaining(ctx context.Context, tb testing.TB, client kubernetes.Interface, pod, want string, timeout time.Duration) {
	tb.Helper()
	var messages []string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		messages, err = FailedSchedulingMessages(ctx, client, Namespace, pod)
		if err != nil {
			return false, nil // the API server may be slow or restarting
		}
		return slices.ContainsFunc(messages, func(m string) bool { return strings.Contains(m, want) }), nil
	})
	if err != nil {
		tb.Fatalf("no FailedScheduling of %s containing %q: %v; messages %q", pod, want, err, messages)
	}
}

// WaitBoundAtLeast waits until at least n pods of Namespace are bound and
// returns how many are.
func WaitBoundAtLeast(ctx context.Context, tb testing.TB, client kubernetes.Interface, n int, timeout time.Duration) int {
	tb.Helper()
	bound := 0
	atLeast := func(pods []corev1.Pod) bool {
		bound = 0
		for i := range pods {
			if Bound(&pods[i]) {
				bound++
			}
		}
		return bound >= n
	}
	if _, err := WaitForPods(ctx, client, Namespace, atLeast, timeout); err != nil {
		tb.Fatal(err)
	}
	return bound
}
