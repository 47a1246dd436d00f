package cluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// FailedSchedulingByPod maps each pod of the namespace to the message of
// its latest FailedScheduling event, from both event APIs, with two lists
// for the whole namespace: FailedSchedulingMessages per pod would list
// every event once per pod, too slow to poll for a hundred pods.
func FailedSchedulingByPod(ctx context.Context, client kubernetes.Interface, namespace string) (map[string]string, error) {
	type note struct {
		at      time.Time
		message string
	}
	latest := map[string]note{}
	offer := func(pod string, at time.Time, message string) {
		if n, ok := latest[pod]; !ok || !at.Before(n.at) {
			latest[pod] = note{at, message}
		}
	}
	core, err := client.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("core/v1 events in %s: %w", namespace, err)
	}
	for _, e := range core.Items {
		if e.Reason == FailedScheduling && e.InvolvedObject.Kind == "Pod" {
			offer(e.InvolvedObject.Name, coreEventTime(&e), e.Message)
		}
	}
	list, err := client.EventsV1().Events(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("events.k8s.io/v1 events in %s: %w", namespace, err)
	}
	for _, e := range list.Items {
		if e.Reason != FailedScheduling || e.Regarding.Kind != "Pod" {
			continue
		}
		offer(e.Regarding.Name, eventsV1Time(&e), e.Note)
	}
	messages := make(map[string]string, len(latest))
	for pod, n := range latest {
		messages[pod] = n.message
	}
	return messages, nil
}

// eventsV1Time is when an events.k8s.io/v1 Event last happened.
func eventsV1Time(e *eventsv1.Event) time.Time {
	switch {
	case e.Series != nil:
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.DeprecatedLastTimestamp.Time
}

// coreEventTime is when a core/v1 Event last happened.
func coreEventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil:
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	}
	return e.EventTime.Time
}

// WaitFailedScheduling waits until the pod has a FailedScheduling event
// and returns the messages (oldest first).
func WaitFailedScheduling(ctx context.Context, client kubernetes.Interface, namespace, pod string, timeout time.Duration) ([]string, error) {
	var messages []string
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		messages, lastErr = FailedSchedulingMessages(ctx, client, namespace, pod)
		return len(messages) > 0, nil
	})
	if err != nil {
		return nil, fmt.Errorf("no FailedScheduling event for %s/%s: %w (last error: %v)", namespace, pod, err, lastErr)
	}
	return messages, nil
}

// StaysPending watches the pod for d and fails as soon as it is bound. A
// negative check has no event to wait for, hence the fixed span.
func StaysPending(ctx context.Context, client kubernetes.Interface, namespace, name string, d time.Duration) error {
	pod, err := WaitForPod(ctx, client, namespace, name, Bound, d)
	if err == nil {
		return fmt.Errorf("pod %s/%s was bound to %s (%s=%q); it should have stayed pending",
			namespace, name, pod.Spec.NodeName, GpuIDsAnnotation, pod.Annotations[GpuIDsAnnotation])
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if pod == nil {
		return fmt.Errorf("pod %s/%s could not be read: %w", namespace, name, err)
	}
	return nil
}
