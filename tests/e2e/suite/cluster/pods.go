package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/kubelet"
)

// Names gpusched and the suite use.
const (
	SchedulerName     = "gpusched"
	GpuResource       = "nvidia.com/gpu"
	GpuIDsAnnotation  = "gpusched.io/gpu-ids"
	PauseImage        = "registry.k8s.io/pause:3.10"
	defaultCPURequest = "100m"
)

// PodBuilder builds a one-container pod; start with NewPod.
type PodBuilder struct {
	pod *corev1.Pod
}

// NewPod is a pod with one container (the pause image) requesting 100m CPU.
func NewPod(namespace, name string) *PodBuilder {
	return &PodBuilder{pod: &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  "main",
			Image: PauseImage,
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(defaultCPURequest)},
			},
		}}},
	}}
}

// SchedulerName sets spec.schedulerName ("gpusched" for gpusched's profile).
func (b *PodBuilder) SchedulerName(name string) *PodBuilder {
	b.pod.Spec.SchedulerName = name
	return b
}

// Gpus requests n nvidia.com/gpu.
func (b *PodBuilder) Gpus(n int) *PodBuilder {
	return b.Resource(GpuResource, strconv.Itoa(n))
}

// Resource requests qty of name. Extended resources (names with a domain,
// like nvidia.com/mig-1g.5gb) get the same limit, as Kubernetes requires;
// cpu, memory and the like get a request only.
func (b *PodBuilder) Resource(name, qty string) *PodBuilder {
	q := resource.MustParse(qty)
	c := &b.pod.Spec.Containers[0]
	c.Resources.Requests[corev1.ResourceName(name)] = q
	if strings.Contains(name, "/") {
		if c.Resources.Limits == nil {
			c.Resources.Limits = corev1.ResourceList{}
		}
		c.Resources.Limits[corev1.ResourceName(name)] = q
	}
	return b
}

// ClaimFromTemplate adds pod resource claim `name`, made from the
// ResourceClaimTemplate `template` (by the resourceclaim controller), and
// gives it to the container.
func (b *PodBuilder) ClaimFromTemplate(name, template string) *PodBuilder {
	b.pod.Spec.ResourceClaims = append(b.pod.Spec.ResourceClaims,
		corev1.PodResourceClaim{Name: name, ResourceClaimTemplateName: &template})
	c := &b.pod.Spec.Containers[0]
	c.Resources.Claims = append(c.Resources.Claims, corev1.ResourceClaim{Name: name})
	return b
}

// Annotation sets an annotation.
func (b *PodBuilder) Annotation(key, value string) *PodBuilder {
	if b.pod.Annotations == nil {
		b.pod.Annotations = map[string]string{}
	}
	b.pod.Annotations[key] = value
	return b
}

// Label sets a label.
func (b *PodBuilder) Label(key, value string) *PodBuilder {
	if b.pod.Labels == nil {
		b.pod.Labels = map[string]string{}
	}
	b.pod.Labels[key] = value
	return b
}

// RunFor makes the fake kubelet mark the pod Succeeded d after it started.
func (b *PodBuilder) RunFor(d time.Duration) *PodBuilder {
	return b.Annotation(kubelet.RunForAnnotation, d.String())
}

// PriorityClass sets spec.priorityClassName.
func (b *PodBuilder) PriorityClass(name string) *PodBuilder {
	b.pod.Spec.PriorityClassName = name
	return b
}

// NodeName binds the pod at creation (no scheduler involved).
func (b *PodBuilder) NodeName(node string) *PodBuilder {
	b.pod.Spec.NodeName = node
	return b
}

// NodeSelector adds a node selector term key=value.
func (b *PodBuilder) NodeSelector(key, value string) *PodBuilder {
	if b.pod.Spec.NodeSelector == nil {
		b.pod.Spec.NodeSelector = map[string]string{}
	}
	b.pod.Spec.NodeSelector[key] = value
	return b
}

// Toleration adds a toleration.
func (b *PodBuilder) Toleration(t corev1.Toleration) *PodBuilder {
	b.pod.Spec.Tolerations = append(b.pod.Spec.Tolerations, t)
	return b
}

// SchedulingGate adds a scheduling gate.
func (b *PodBuilder) SchedulingGate(name string) *PodBuilder {
	b.pod.Spec.SchedulingGates = append(b.pod.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: name})
	return b
}

// Build returns the pod (a copy: the builder may be reused).
func (b *PodBuilder) Build() *corev1.Pod { return b.pod.DeepCopy() }

// Create creates the pod.
func (b *PodBuilder) Create(ctx context.Context, client kubernetes.Interface) (*corev1.Pod, error) {
	pod := b.Build()
	created, err := client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return created, nil
}

// GpuIDs parses the gpusched.io/gpu-ids annotation ("0,1,2,3").
func GpuIDs(pod *corev1.Pod) ([]int, error) {
	text, ok := pod.Annotations[GpuIDsAnnotation]
	if !ok {
		return nil, fmt.Errorf("pod %s/%s has no %s annotation", pod.Namespace, pod.Name, GpuIDsAnnotation)
	}
	var ids []int
	for _, field := range strings.Split(text, ",") {
		id, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: %s=%q: %w", pod.Namespace, pod.Name, GpuIDsAnnotation, text, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
