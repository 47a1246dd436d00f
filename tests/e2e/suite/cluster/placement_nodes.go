package cluster

import (
	corev1 "k8s.io/api/core/v1"
)

// unschedulableTaint is how kube-scheduler sees a cordoned node.
var unschedulableTaint = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}

// Admits reports whether the node passes what kube-scheduler checks before
// resources: cordon, NoSchedule/NoExecute taints and the nodeSelector.
// Required node affinity is not read (the suite's pods use selectors).
func Admits(node *corev1.Node, pod *corev1.Pod) bool {
	if node.Spec.Unschedulable && !tolerates(pod, &unschedulableTaint) {
		return false
	}
	for i := range node.Spec.Taints {
		taint := &node.Spec.Taints[i]
		if taint.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !tolerates(pod, taint) {
			return false
		}
	}
	for key, value := range pod.Spec.NodeSelector {
		if node.Labels[key] != value {
			return false
		}
	}
	return true
}

// tolerates is Toleration.ToleratesTaint for the Equal and Exists
// operators (the API's version needs a logger and a feature gate).
func tolerates(pod *corev1.Pod, taint *corev1.Taint) bool {
	for _, t := range pod.Spec.Tolerations {
		if t.Effect != "" && t.Effect != taint.Effect {
			continue
		}
		if t.Key != "" && t.Key != taint.Key {
			continue
		}
		switch t.Operator {
		case corev1.TolerationOpExists:
			return true
		case corev1.TolerationOpEqual, "":
			if t.Key != "" && t.Value == taint.Value {
				return true
			}
		}
	}
	return false
}

// NodeNamed returns the node of that name in nodes, or nil.
func NodeNamed(nodes []corev1.Node, name string) *corev1.Node {
	for i := range nodes {
		if nodes[i].Name == name {
			return &nodes[i]
		}
	}
	return nil
}

// CopyNode is node under another name (metadata.name and the hostname
// label), for a test that needs one more node like a demo one.
func CopyNode(node *corev1.Node, name string) *corev1.Node {
	c := node.DeepCopy()
	c.Name = name
	c.Labels[HostnameLabel] = name
	for i := range c.Status.Addresses {
		if c.Status.Addresses[i].Type == corev1.NodeHostName {
			c.Status.Addresses[i].Address = name
		}
	}
	return c
}
