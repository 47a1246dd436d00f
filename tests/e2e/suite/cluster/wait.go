package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// pollInterval is how often waits look; pods change within milliseconds
// here, and a list of a few hundred pods on loopback is cheap.
const pollInterval = 100 * time.Millisecond

// Bound reports whether the pod has a node.
func Bound(pod *corev1.Pod) bool { return pod.Spec.NodeName != "" }

// Running reports whether the pod is bound and running.
func Running(pod *corev1.Pod) bool { return Bound(pod) && pod.Status.Phase == corev1.PodRunning }

// WaitForPods polls the pods of namespace until pred holds for them (all
// of them, in name order), or timeout. The error describes every pod.
func WaitForPods(ctx context.Context, client kubernetes.Interface, namespace string, pred func([]corev1.Pod) bool, timeout time.Duration) ([]corev1.Pod, error) {
	var pods []corev1.Pod
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			lastErr = err // the apiserver may be restarting: keep polling
			return false, nil
		}
		pods, lastErr = list.Items, nil
		return pred(pods), nil
	})
	if err != nil {
		return pods, fmt.Errorf("pods in %s: %w (last list error: %v)\n%s", namespace, err, lastErr, describePods(ctx, client, pods))
	}
	return pods, nil
}

// WaitForPod polls one pod until pred holds, or timeout.
func WaitForPod(ctx context.Context, client kubernetes.Interface, namespace, name string, pred func(*corev1.Pod) bool, timeout time.Duration) (*corev1.Pod, error) {
	var pod *corev1.Pod
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		got, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			lastErr = err
			return false, nil
		}
		pod, lastErr = got, nil
		return pred(pod), nil
	})
	if err != nil {
		desc := "(never read)"
		if pod != nil {
			desc = describePods(ctx, client, []corev1.Pod{*pod})
		}
		return pod, fmt.Errorf("pod %s/%s: %w (last get error: %v)\n%s", namespace, name, err, lastErr, desc)
	}
	return pod, nil
}

// WaitBound waits until the pod has a node.
func WaitBound(ctx context.Context, client kubernetes.Interface, namespace, name string, timeout time.Duration) (*corev1.Pod, error) {
	return WaitForPod(ctx, client, namespace, name, Bound, timeout)
}

// WaitRunning waits until the pod is bound and Running.
func WaitRunning(ctx context.Context, client kubernetes.Interface, namespace, name string, timeout time.Duration) (*corev1.Pod, error) {
	return WaitForPod(ctx, client, namespace, name, Running, timeout)
}

// AllBound is a WaitForPods predicate: exactly n pods, all bound.
func AllBound(n int) func([]corev1.Pod) bool {
	return func(pods []corev1.Pod) bool {
		if len(pods) != n {
			return false
		}
		for i := range pods {
			if !Bound(&pods[i]) {
				return false
			}
		}
		return true
	}
}

// describePods is one line per pod, with the last FailedScheduling message
// of pods without a node: what a failed wait needs to be understood.
func describePods(ctx context.Context, client kubernetes.Interface, pods []corev1.Pod) string {
	// ctx may be the expired one of the wait.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var b strings.Builder
	for i := range pods {
		p := &pods[i]
		fmt.Fprintf(&b, "  %s/%s phase=%s node=%q nominated=%q deleting=%v gpu-ids=%q",
			p.Namespace, p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.NominatedNodeName,
			p.DeletionTimestamp != nil, p.Annotations[GpuIDsAnnotation])
		if !Bound(p) {
			if msgs, err := FailedSchedulingMessages(ctx, client, p.Namespace, p.Name); err == nil && len(msgs) > 0 {
				fmt.Fprintf(&b, " last FailedScheduling: %q", msgs[len(msgs)-1])
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
