package suite_test

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

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// Pods and waits of the fault tests (faults_test.go).

func faultGpuPod(name string, gpus int) *cluster.PodBuilder {
	return cluster.NewPod(faultNamespace, name).SchedulerName(cluster.SchedulerName).Gpus(gpus)
}

// faultCreatePods creates <prefix>-<i> asking for sizes[i] GPUs and
// returns their names.
func faultCreatePods(ctx context.Context, t *testing.T, client kubernetes.Interface, prefix string, sizes []int) []string {
	t.Helper()
	var names []string
	for i, gpus := range sizes {
		name := fmt.Sprintf("%s-%d", prefix, i)
		if _, err := faultGpuPod(name, gpus).Create(ctx, client); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

// faultRunPinned creates 4-GPU pods pinned to a node and waits until they
// run.
func faultRunPinned(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, node string, names ...string) []corev1.Pod {
	t.Helper()
	for _, name := range names {
		if _, err := faultGpuPod(name, 4).NodeSelector(faultHostnameLabel, node).Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
	}
	var pods []corev1.Pod
	for _, name := range names {
		pod, err := cluster.WaitRunning(ctx, cp.Client, faultNamespace, name, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		pods = append(pods, *pod)
	}
	return pods
}

// faultDelete deletes a pod and waits until it is gone (the fake kubelet
// ends it).
func faultDelete(ctx context.Context, t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	pod, err := client.CoreV1().Pods(faultNamespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().Pods(faultNamespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	faultWaitGone(ctx, t, client, *pod)
}

func faultPodsByName(ctx context.Context, t *testing.T, client kubernetes.Interface, namespace string) map[string]corev1.Pod {
	t.Helper()
	list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]corev1.Pod{}
	for _, p := range list.Items {
		pods[p.Name] = p
	}
	return pods
}

// faultGpuIDs is the pod's gpu-ids, sorted.
func faultGpuIDs(t *testing.T, pod corev1.Pod) []int {
	t.Helper()
	ids, err := cluster.GpuIDs(&pod)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

// faultWaitGone waits until the pod (this UID) no longer exists.
func faultWaitGone(ctx context.Context, t *testing.T, client kubernetes.Interface, pod corev1.Pod) {
	t.Helper()
	gone := func(pods []corev1.Pod) bool {
		return !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.UID == pod.UID })
	}
	if _, err := cluster.WaitForPods(ctx, client, pod.Namespace, gone, 20*time.Second); err != nil {
		t.Fatalf("pod %s was never deleted: %v", pod.Name, err)
	}
}

// faultWaitMessage waits for a FailedScheduling event of the pod whose
// message contains want.
func faultWaitMessage(ctx context.Context, t *testing.T, client kubernetes.Interface, pod, want string, timeout time.Duration) {
	t.Helper()
	var messages []string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		messages, err = cluster.FailedSchedulingMessages(ctx, client, faultNamespace, pod)
		if err != nil {
			return false, nil // the API server may be slow or restarting
		}
		return slices.ContainsFunc(messages, func(m string) bool { return strings.Contains(m, want) }), nil
	})
	if err != nil {
		t.Fatalf("no FailedScheduling of %s containing %q: %v; messages %q", pod, want, err, messages)
	}
}

// faultWaitBoundAtLeast waits until at least n pods of the namespace are
// bound and returns how many are.
func faultWaitBoundAtLeast(ctx context.Context, t *testing.T, client kubernetes.Interface, n int, timeout time.Duration) int {
	t.Helper()
	bound := 0
	atLeast := func(pods []corev1.Pod) bool {
		bound = 0
		for i := range pods {
			if cluster.Bound(&pods[i]) {
				bound++
			}
		}
		return bound >= n
	}
	if _, err := cluster.WaitForPods(ctx, client, faultNamespace, atLeast, timeout); err != nil {
		t.Fatal(err)
	}
	return bound
}
