package cluster

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Names a placement check reads besides those in pods.go.
const (
	HostnameLabel         = "kubernetes.io/hostname"
	ReplicasLabel         = "nvidia.com/gpu.replicas"
	GpuMilliAnnotation    = "gpusched.io/gpu-milli"
	GpuTopologyAnnotation = "gpusched.io/gpu-topology"
	// DefaultScheduler is the schedulerName of pods another scheduler
	// places (none runs here: such pods are created with spec.nodeName).
	DefaultScheduler = "default-scheduler"
	milliPerGpu      = 1000
)

// GpuReplicas is a node's nvidia.com/gpu.replicas label: how many pods
// share each GPU on a time-sliced or MPS node; 1 when absent or invalid.
func GpuReplicas(node *corev1.Node) int {
	r, err := strconv.Atoi(node.Labels[ReplicasLabel])
	if err != nil || r < 1 {
		return 1
	}
	return r
}

// Allocatable is the node's allocatable amount of a resource, as an
// integer (GPU and MIG resources are counts).
func Allocatable(node *corev1.Node, resource string) int64 {
	q := node.Status.Allocatable[corev1.ResourceName(resource)]
	return q.Value()
}

// PhysicalGpus is how many healthy GPUs stand behind the node's allocatable
// nvidia.com/gpu: on a time-sliced node allocatable counts replicas.
func PhysicalGpus(node *corev1.Node) int {
	return int(Allocatable(node, GpuResource)) / GpuReplicas(node)
}

// Requested is the pod's effective request of an integer resource, as
// Kubernetes computes it: the larger of the app containers' sum and any
// one init container (overhead is left out: the suite sets none).
func Requested(pod *corev1.Pod, resource string) int64 {
	name := corev1.ResourceName(resource)
	var sum int64
	for _, c := range pod.Spec.Containers {
		q := c.Resources.Requests[name]
		sum += q.Value()
	}
	for _, c := range pod.Spec.InitContainers {
		q := c.Resources.Requests[name]
		sum = max(sum, q.Value())
	}
	return sum
}

// Holds reports whether the pod holds resources on a node: bound, and
// neither finished nor being deleted.
func Holds(pod *corev1.Pod) bool {
	return Bound(pod) && pod.DeletionTimestamp == nil &&
		pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// GpuMilli is the pod's gpusched.io/gpu-milli share; 0 for whole GPUs.
func GpuMilli(pod *corev1.Pod) int {
	milli, err := strconv.Atoi(pod.Annotations[GpuMilliAnnotation])
	if err != nil {
		return 0
	}
	return milli
}

// NodeGpuUse is what the API server shows of one node's GPUs: the pods
// holding them and, from their gpusched.io/gpu-ids, which devices.
type NodeGpuUse struct {
	Node *corev1.Node
	// Replicas per GPU (1 unless time-sliced) and healthy physical GPUs.
	Replicas, Gpus int
	// Requested is the nvidia.com/gpu the holding pods request: what
	// kube-scheduler's NodeResourcesFit subtracts from allocatable.
	Requested int64
	// Milli is the milli-GPU taken on each device index named by a
	// holding pod's gpu-ids (a share's gpu-milli; otherwise 1000/Replicas).
	Milli map[int]int
	// Pods hold the node; Unannotated are those among them that request
	// nvidia.com/gpu but have no gpu-ids (their devices are unknown).
	Pods, Unannotated []*corev1.Pod
}

// GpuUse groups the holding pods by node. Pods on nodes not in nodes are
// left out; every node gets an entry.
func GpuUse(nodes []corev1.Node, pods []corev1.Pod) map[string]*NodeGpuUse {
	use := map[string]*NodeGpuUse{}
	for i := range nodes {
		n := &nodes[i]
		use[n.Name] = &NodeGpuUse{Node: n, Replicas: GpuReplicas(n), Gpus: PhysicalGpus(n), Milli: map[int]int{}}
	}
	for i := range pods {
		p := &pods[i]
		u := use[p.Spec.NodeName]
		if u == nil || !Holds(p) {
			continue
		}
		u.add(p)
	}
	return use
}

func (u *NodeGpuUse) add(pod *corev1.Pod) {
	u.Pods = append(u.Pods, pod)
	gpus := Requested(pod, GpuResource)
	u.Requested += gpus
	if gpus == 0 {
		return
	}
	ids, err := GpuIDs(pod)
	if err != nil {
		u.Unannotated = append(u.Unannotated, pod)
		return
	}
	milli := GpuMilli(pod)
	if milli == 0 {
		milli = milliPerGpu / u.Replicas
	}
	for _, id := range ids {
		u.Milli[id] += milli
	}
}

// FreeUnits is allocatable nvidia.com/gpu minus what holding pods request
// (whole GPUs, or replicas on a time-sliced node).
func (u *NodeGpuUse) FreeUnits() int64 {
	return Allocatable(u.Node, GpuResource) - u.Requested
}

// gpusWithRoom counts the devices with at least milli free, by gpu-ids.
func (u *NodeGpuUse) gpusWithRoom(milli int) int {
	n := 0
	for id := range u.Gpus {
		if milliPerGpu-u.Milli[id] >= milli {
			n++
		}
	}
	return n
}

// WholeGpusFit reports whether k more nvidia.com/gpu fit by what the API
// server shows: k free units, and on a time-sliced node k different GPUs
// with a replica free (gpusched's rule; it needs every holder annotated).
func (u *NodeGpuUse) WholeGpusFit(k int) bool {
	if u.FreeUnits() < int64(k) {
		return false
	}
	return u.Replicas == 1 || u.gpusWithRoom(milliPerGpu/u.Replicas) >= k
}

// CheckDevices returns one line per broken device invariant on the node:
// every holding gpusched pod that requests nvidia.com/gpu has gpu-ids
// (another scheduler's pods need not), every pod's gpu-ids has as many
// distinct ids as it requested (one for a share), each in [0, Gpus); no
// device is given out beyond 1000 milli-GPU, so on a node that is not
// shared the pods' id sets are pairwise disjoint.
func (u *NodeGpuUse) CheckDevices() []string {
	var problems []string
	for _, p := range u.Unannotated {
		if p.Spec.SchedulerName != SchedulerName {
			continue
		}
		problems = append(problems, fmt.Sprintf("%s/%s holds %d nvidia.com/gpu on %s without %s",
			p.Namespace, p.Name, Requested(p, GpuResource), u.Node.Name, GpuIDsAnnotation))
	}
	for _, p := range u.Pods {
		problems = append(problems, u.checkPodIDs(p)...)
	}
	holders := u.holders()
	for _, id := range sortedKeys(u.Milli) {
		if u.Milli[id] > milliPerGpu {
			problems = append(problems, fmt.Sprintf("GPU %d of %s given out %d milli-GPU (>1000) to %s",
				id, u.Node.Name, u.Milli[id], strings.Join(holders[id], ", ")))
		}
	}
	return problems
}

func (u *NodeGpuUse) checkPodIDs(p *corev1.Pod) []string {
	want := int(Requested(p, GpuResource))
	if want == 0 {
		return nil
	}
	ids, err := GpuIDs(p)
	if err != nil {
		return nil // reported as unannotated
	}
	if GpuMilli(p) > 0 {
		want = 1
	}
	var problems []string
	seen := map[int]bool{}
	for _, id := range ids {
		if id < 0 || id >= u.Gpus {
			problems = append(problems, fmt.Sprintf("%s/%s has GPU %d, outside [0,%d) on %s",
				p.Namespace, p.Name, id, u.Gpus, u.Node.Name))
		}
		seen[id] = true
	}
	if len(ids) != want || len(seen) != want {
		problems = append(problems, fmt.Sprintf("%s/%s has %s=%q: want %d distinct ids",
			p.Namespace, p.Name, GpuIDsAnnotation, p.Annotations[GpuIDsAnnotation], want))
	}
	return problems
}

// holders names the pods on each device, for messages.
func (u *NodeGpuUse) holders() map[int][]string {
	out := map[int][]string{}
	for _, p := range u.Pods {
		ids, err := GpuIDs(p)
		if err != nil {
			continue
		}
		for _, id := range ids {
			out[id] = append(out[id], fmt.Sprintf("%s=%q", p.Name, p.Annotations[GpuIDsAnnotation]))
		}
	}
	return out
}

func sortedKeys(m map[int]int) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}
