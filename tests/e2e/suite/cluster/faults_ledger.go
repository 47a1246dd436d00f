package cluster

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// GpuLedger is the GPU assignment as the API server shows it, read from
// the gpusched.io/gpu-ids annotation of every pod that holds a node. It is
// what gpusched promises, checked from outside: a device is never given to
// more pods than it has room for, and every bound GPU pod names exactly as
// many distinct devices as it requests, all on its node.
type GpuLedger struct {
	Nodes map[string]*LedgerNode
	// Pending are the pods without a node that have not finished.
	Pending []*corev1.Pod
	// Problems are broken promises, one sentence each.
	Problems []string
}

// LedgerNode is one node's devices and who holds them.
type LedgerNode struct {
	Node *corev1.Node
	// Gpus is the number of device ids (0..Gpus-1); Replicas how many pods
	// may share one (time-slicing), 1 otherwise.
	Gpus, Replicas int
	// Holders maps a device id to the pods ("namespace/name") holding it.
	Holders map[int][]string
}

// NewGpuLedger builds the ledger of pods on nodes. A pod holds its node
// while bound and not finished; a pod being deleted still holds it (its
// containers run until the kubelet stops them, and gpusched keeps its
// devices until the pod is gone).
func NewGpuLedger(nodes []corev1.Node, pods []corev1.Pod) *GpuLedger {
	l := &GpuLedger{Nodes: map[string]*LedgerNode{}}
	for i := range nodes {
		n := &nodes[i]
		replicas := GpuReplicas(n)
		allocatable := n.Status.Allocatable[corev1.ResourceName(GpuResource)]
		l.Nodes[n.Name] = &LedgerNode{Node: n, Replicas: replicas,
			Gpus: int(allocatable.Value()) / replicas, Holders: map[int][]string{}}
	}
	for i := range pods {
		p := &pods[i]
		switch {
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
		case !Bound(p):
			l.Pending = append(l.Pending, p)
		default:
			l.add(p)
		}
	}
	l.checkSharing()
	return l
}

// PodGpus is the pod's effective nvidia.com/gpu request.
func PodGpus(pod *corev1.Pod) int {
	return int(Requested(pod, GpuResource))
}

func (l *GpuLedger) problemf(format string, args ...any) {
	l.Problems = append(l.Problems, fmt.Sprintf(format, args...))
}

// add records a bound pod's devices, and what is wrong with its
// annotation.
func (l *GpuLedger) add(p *corev1.Pod) {
	key := p.Namespace + "/" + p.Name
	want := PodGpus(p)
	node := l.Nodes[p.Spec.NodeName]
	if want == 0 {
		return
	}
	if node == nil {
		l.problemf("pod %s is bound to node %s, which is not in the cluster", key, p.Spec.NodeName)
		return
	}
	ids, err := GpuIDs(p)
	if err != nil {
		l.problemf("bound pod %s on %s: %v", key, p.Spec.NodeName, err)
		return
	}
	if len(ids) != want {
		l.problemf("pod %s on %s requests %d GPUs but %s=%q names %d", key, p.Spec.NodeName,
			want, GpuIDsAnnotation, p.Annotations[GpuIDsAnnotation], len(ids))
	}
	seen := map[int]bool{}
	for _, id := range ids {
		if id < 0 || id >= node.Gpus {
			l.problemf("pod %s has GPU %d on %s, which has GPUs 0..%d", key, id, p.Spec.NodeName, node.Gpus-1)
		}
		if seen[id] {
			l.problemf("pod %s names GPU %d twice in %q", key, id, p.Annotations[GpuIDsAnnotation])
		}
		seen[id] = true
		node.Holders[id] = append(node.Holders[id], key)
	}
}

// checkSharing reports every device held by more pods than it has room for.
func (l *GpuLedger) checkSharing() {
	for _, name := range l.NodeNames() {
		node := l.Nodes[name]
		for _, id := range faultSortedIDs(node.Holders) {
			if holders := node.Holders[id]; len(holders) > node.Replicas {
				l.problemf("GPU %d of node %s is given to %d pods (room for %d): %v",
					id, name, len(holders), node.Replicas, holders)
			}
		}
	}
}

// NodeNames are the ledger's nodes in name order.
func (l *GpuLedger) NodeNames() []string {
	names := make([]string, 0, len(l.Nodes))
	for name := range l.Nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func faultSortedIDs(m map[int][]string) []int {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// FreeIDs are the node's devices with room for one more pod.
func (n *LedgerNode) FreeIDs() []int {
	var free []int
	for id := 0; id < n.Gpus; id++ {
		if len(n.Holders[id]) < n.Replicas {
			free = append(free, id)
		}
	}
	return free
}

// FitsOn reports whether the pod could still be placed on the node: the
// node Admits it (not cordoned, taints tolerated, node selector met) and
// has as many devices with room as the pod requests, whichever they are
// (the pod asks for no topology).
func (l *GpuLedger) FitsOn(pod *corev1.Pod, name string) bool {
	node := l.Nodes[name]
	if node == nil || !Admits(node.Node, pod) {
		return false
	}
	return len(node.FreeIDs()) >= PodGpus(pod)
}

// Fitting lists the pending pods that fit on some node now, with that node:
// while it is not empty, the cluster has not settled.
func (l *GpuLedger) Fitting() []string {
	var out []string
	for _, p := range l.Pending {
		for _, name := range l.NodeNames() {
			if l.FitsOn(p, name) {
				out = append(out, fmt.Sprintf("%s/%s (%d GPUs) fits on %s (free %v)",
					p.Namespace, p.Name, PodGpus(p), name, l.Nodes[name].FreeIDs()))
				break
			}
		}
	}
	return out
}
