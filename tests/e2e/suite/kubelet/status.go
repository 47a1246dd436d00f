package kubelet

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// markRunning is the status a kubelet reports once every container runs.
func markRunning(pod *corev1.Pod, now metav1.Time) {
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = &now
	for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		setCondition(pod, t, corev1.ConditionTrue, "", now)
	}
	started := true
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name:    c.Name,
			Image:   c.Image,
			Ready:   true,
			Started: &started,
			State:   corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
}

// markRunningNotReady is a pod whose containers run but are not Ready yet.
func markRunningNotReady(pod *corev1.Pod, now metav1.Time) {
	markRunning(pod, now)
	setCondition(pod, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady", now)
	setCondition(pod, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", now)
	for i := range pod.Status.ContainerStatuses {
		pod.Status.ContainerStatuses[i].Ready = false
	}
}

// markReady is a running pod whose containers became Ready.
func markReady(pod *corev1.Pod, now metav1.Time) {
	setCondition(pod, corev1.ContainersReady, corev1.ConditionTrue, "", now)
	setCondition(pod, corev1.PodReady, corev1.ConditionTrue, "", now)
	for i := range pod.Status.ContainerStatuses {
		pod.Status.ContainerStatuses[i].Ready = true
	}
}

// podReady reports the pod's Ready condition (a pod without one, as
// markRunning writes none for a pod another kubelet started, counts as
// Ready: only this kubelet's ready-after makes a pod not Ready).
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return true
}

// markSucceeded is the status of a pod whose containers all exited 0.
func markSucceeded(pod *corev1.Pod, now metav1.Time) {
	pod.Status.Phase = corev1.PodSucceeded
	setCondition(pod, corev1.ContainersReady, corev1.ConditionFalse, "PodCompleted", now)
	setCondition(pod, corev1.PodReady, corev1.ConditionFalse, "PodCompleted", now)
	started := false
	for i := range pod.Status.ContainerStatuses {
		status := &pod.Status.ContainerStatuses[i]
		startedAt := now
		if status.State.Running != nil {
			startedAt = status.State.Running.StartedAt
		}
		status.Ready, status.Started = false, &started
		status.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: startedAt, FinishedAt: now,
		}}
	}
}

// markKilled is the status of a pod whose containers were killed because
// it was deleted: Failed, each container terminated by SIGKILL (137).
func markKilled(pod *corev1.Pod, now metav1.Time) {
	pod.Status.Phase = corev1.PodFailed
	setCondition(pod, corev1.ContainersReady, corev1.ConditionFalse, "PodFailed", now)
	setCondition(pod, corev1.PodReady, corev1.ConditionFalse, "PodFailed", now)
	started := false
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Started: &started,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "Error", FinishedAt: now,
			}},
		})
	}
}

// setCondition sets a pod condition, keeping its transition time when the
// status does not change.
func setCondition(pod *corev1.Pod, t corev1.PodConditionType, status corev1.ConditionStatus, reason string, now metav1.Time) {
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message = status, reason, ""
		return
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
		Type: t, Status: status, Reason: reason, LastTransitionTime: now,
	})
}
