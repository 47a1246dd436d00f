package arena

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/kubelet"
)

// What the arena puts on its pods besides Kueue's labels, to find them
// and measure them.
const (
	// WorkloadLabel is the workload (pod group) name; every arena pod has it.
	WorkloadLabel = "arena.gpusched.io/workload"
	ClassLabel    = "arena.gpusched.io/class"
	// MemberLabel is the pod's slot in its group (0..Request-1).
	MemberLabel = "arena.gpusched.io/member"
	// AttemptAnnotation counts the pod's replacements (0: the first pod of
	// its slot).
	AttemptAnnotation = "arena.gpusched.io/attempt"
	// PriorityClassLabel names a WorkloadPriorityClass (Kueue's label,
	// which gpusched reads too).
	PriorityClassLabel = "kueue.x-k8s.io/priority-class"
)

// Arrival is one workload of a scenario and when it arrives.
type Arrival struct {
	// At is the time after the round's start.
	At    time.Duration
	Queue QueueRef
	Class string
	Name  string
	Pods  int
	// PodGPUs is each pod's nvidia.com/gpu (1 when 0).
	PodGPUs int
	Runtime time.Duration
	// PriorityClass is the WorkloadPriorityClass ("" for none).
	PriorityClass string
	NodeSelector  map[string]string
	// Annotations are added to every pod's.
	Annotations map[string]string
	// FirstReadyAfter holds the readiness of each member's first pod
	// (attempt 0) back that long after it starts.
	FirstReadyAfter time.Duration
}

// GPUs is each pod's nvidia.com/gpu.
func (a Arrival) GPUs() int { return max(1, a.PodGPUs) }

// Arrivals are the scenario's workloads in arrival order (ties: queue,
// then set, then index, as listed), the same for every arm and round.
// Workload i of a set is named <class>-<set>-<i>, as Kueue's generator
// names it, in its queue's namespace.
func (s *Scenario) Arrivals() []Arrival {
	rng := rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15))
	scale := func(ms int) time.Duration {
		return time.Duration(float64(ms) * s.TimeScale * float64(time.Millisecond))
	}
	var out []Arrival
	for _, q := range s.Queues {
		for setIdx, w := range s.WorkloadSets {
			if len(w.Queues) > 0 && !slices.Contains(w.Queues, q.Namespace) {
				continue
			}
			for i := range w.Count {
				at := scale(w.StartMs + (i+1)*w.IntervalMs)
				if s.JitterMs > 0 {
					at += scale(rng.IntN(s.JitterMs))
				}
				out = append(out, Arrival{
					At: at, Queue: q, Class: w.Class, Name: fmt.Sprintf("%s-%d-%d", w.Class, setIdx, i),
					Pods: w.Request, PodGPUs: w.PodGPUs, Runtime: scale(w.RuntimeMs), PriorityClass: w.PriorityClass,
					NodeSelector: w.NodeSelector, Annotations: w.Annotations, FirstReadyAfter: scale(w.FirstReadyAfterMs),
				})
			}
		}
	}
	for _, w := range s.Workloads {
		q := s.queueOf(w.Queue)
		out = append(out, Arrival{
			At: scale(w.AtMs), Queue: q, Class: w.Class, Name: w.Name,
			Pods: w.Pods, PodGPUs: w.PodGPUs, Runtime: scale(w.RuntimeMs), PriorityClass: w.PriorityClass,
			NodeSelector: w.NodeSelector, Annotations: w.Annotations, FirstReadyAfter: scale(w.FirstReadyAfterMs),
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

// queueOf is the queue whose namespace is ns (Check made sure there is one).
func (s *Scenario) queueOf(ns string) QueueRef {
	for _, q := range s.Queues {
		if q.Namespace == ns {
			return q
		}
	}
	return QueueRef{}
}

// Key is namespace/name, the workload's identity in a round.
func (a Arrival) Key() string { return a.Queue.Namespace + "/" + a.Name }

// PodName is the name of member's pod after attempt replacements.
func (a Arrival) PodName(member, attempt int) string {
	if attempt == 0 {
		return fmt.Sprintf("%s-m%d", a.Name, member)
	}
	return fmt.Sprintf("%s-m%d-r%d", a.Name, member, attempt)
}

// Pod is member's pod: GPUs() nvidia.com/gpu and nothing else (the
// ClusterQueues cover only GPUs, and Kueue admits a pod only if its queue
// covers every resource it asks for), in the group Kueue and gpusched both
// read, running Runtime once started (the fake kubelet's run-for).
// schedulerName is the arm's: each system's pods name its scheduler.
func (a Arrival) Pod(member, attempt int, schedulerName string) *corev1.Pod {
	gpu := resource.MustParse(strconv.Itoa(a.GPUs()))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   a.Queue.Namespace,
			Name:        a.PodName(member, attempt),
			Labels:      a.podLabels(member),
			Annotations: a.podAnnotations(attempt),
		},
		Spec: corev1.PodSpec{
			SchedulerName: schedulerName,
			NodeSelector:  a.NodeSelector,
			Containers: []corev1.Container{{
				Name:  "main",
				Image: cluster.PauseImage,
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{cluster.GpuResource: gpu},
					Limits:   corev1.ResourceList{cluster.GpuResource: gpu},
				},
			}},
		},
	}
}

// podAnnotations are the scenario's, then the arena's own (which win).
func (a Arrival) podAnnotations(attempt int) map[string]string {
	out := map[string]string{}
	for k, v := range a.Annotations {
		out[k] = v
	}
	out[PodGroupTotalCountAnnotation] = strconv.Itoa(a.Pods)
	out[kubelet.RunForAnnotation] = a.Runtime.String()
	out[AttemptAnnotation] = strconv.Itoa(attempt)
	if attempt == 0 && a.FirstReadyAfter > 0 {
		out[kubelet.ReadyAfterAnnotation] = a.FirstReadyAfter.String()
	}
	return out
}

func (a Arrival) podLabels(member int) map[string]string {
	labels := map[string]string{
		QueueNameLabel:    a.Queue.LocalQueue,
		PodGroupNameLabel: a.Name,
		WorkloadLabel:     a.Name,
		ClassLabel:        a.Class,
		MemberLabel:       strconv.Itoa(member),
	}
	if a.PriorityClass != "" {
		labels[PriorityClassLabel] = a.PriorityClass
	}
	return labels
}
