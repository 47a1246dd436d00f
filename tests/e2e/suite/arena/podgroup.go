package arena

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/cluster"
)

// What Kueue's pod integration reads from a pod, and what its webhook and
// controller put on the pods it manages.
const (
	QueueNameLabel               = "kueue.x-k8s.io/queue-name"
	PodGroupNameLabel            = "kueue.x-k8s.io/pod-group-name"
	PodGroupTotalCountAnnotation = "kueue.x-k8s.io/pod-group-total-count"
	// AdmissionGate holds a managed pod until its workload is admitted.
	AdmissionGate = "kueue.x-k8s.io/admission"
	// ManagedLabel (value "true") and ManagedFinalizer mark a managed pod.
	ManagedLabel     = "kueue.x-k8s.io/managed"
	ManagedFinalizer = "kueue.x-k8s.io/managed"
)

// PodGroup is a group of identical pods that Kueue admits as one workload
// (named Name) from LocalQueue Queue.
type PodGroup struct {
	Namespace, Queue, Name string
	// Size pods, each asking for GPUs nvidia.com/gpu.
	Size, GPUs int
}

// Pods are the group's pods, <Name>-0 .. <Name>-<Size-1>, for
// kube-scheduler's default profile.
func (g PodGroup) Pods() []*corev1.Pod {
	var pods []*corev1.Pod
	for i := range g.Size {
		pods = append(pods, cluster.NewPod(g.Namespace, fmt.Sprintf("%s-%d", g.Name, i)).
			Gpus(g.GPUs).
			Label(QueueNameLabel, g.Queue).
			Label(PodGroupNameLabel, g.Name).
			Annotation(PodGroupTotalCountAnnotation, strconv.Itoa(g.Size)).
			Build())
	}
	return pods
}

// Create creates the group's pods and returns them as the API server
// stored them (after the admission webhooks).
func (g PodGroup) Create(ctx context.Context, client kubernetes.Interface) ([]*corev1.Pod, error) {
	var created []*corev1.Pod
	for _, pod := range g.Pods() {
		out, err := client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			return created, fmt.Errorf("pod group %s: %w", g.Name, err)
		}
		created = append(created, out)
	}
	return created, nil
}

// Gated reports whether pod still carries Kueue's admission gate.
func Gated(pod *corev1.Pod) bool {
	return slices.ContainsFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool {
		return g.Name == AdmissionGate
	})
}

// ManagedByKueue reports whether Kueue's webhook took pod in: the
// admission gate, the managed label and the finalizer.
func ManagedByKueue(pod *corev1.Pod) error {
	switch {
	case !Gated(pod):
		return fmt.Errorf("pod %s has no scheduling gate %s (gates %v)", pod.Name, AdmissionGate, pod.Spec.SchedulingGates)
	case pod.Labels[ManagedLabel] != "true":
		return fmt.Errorf("pod %s has no label %s=true (labels %v)", pod.Name, ManagedLabel, pod.Labels)
	case !slices.Contains(pod.Finalizers, ManagedFinalizer):
		return fmt.Errorf("pod %s has no finalizer %s (finalizers %v)", pod.Name, ManagedFinalizer, pod.Finalizers)
	}
	return nil
}
