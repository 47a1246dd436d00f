// Package cluster has the helpers tests use on a control plane: nodes as a
// kubelet registers them, pods, waits and scheduling events.
package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/controlplane"
)

// DemoClusterFile is the demo cluster, relative to the repo.
const DemoClusterFile = "deploy/examples/demo-cluster.yaml"

// DemoNodes returns the Node objects of deploy/examples/demo-cluster.yaml,
// in file order (its pods are left out).
func DemoNodes(repo string) ([]corev1.Node, error) {
	return NodesFromFile(filepath.Join(repo, DemoClusterFile))
}

// NodesFromFile returns the Nodes of a YAML file (a List or documents).
func NodesFromFile(path string) ([]corev1.Node, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("nodes: %w", err)
	}
	defer f.Close()
	objs, err := controlplane.DecodeObjects(f)
	if err != nil {
		return nil, fmt.Errorf("nodes %s: %w", path, err)
	}
	var nodes []corev1.Node
	for _, obj := range objs {
		if obj.GetKind() != "Node" {
			continue
		}
		var node corev1.Node
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &node); err != nil {
			return nil, fmt.Errorf("nodes %s: node %s: %w", path, obj.GetName(), err)
		}
		nodes = append(nodes, node)
	}
	return nodes, nil
}

// CreateNode registers node as a kubelet does: the object (labels,
// annotations, spec with taints and unschedulable), then its status through
// the status subresource: capacity, allocatable, addresses, node info and
// conditions, with every condition's times set to now and Ready=True added
// when the node has no Ready condition. Server-set metadata from the file
// (uid, resourceVersion, creationTimestamp) is dropped.
func CreateNode(ctx context.Context, client kubernetes.Interface, node *corev1.Node) (*corev1.Node, error) {
	object := node.DeepCopy()
	object.Status = corev1.NodeStatus{}
	object.ObjectMeta = metav1.ObjectMeta{
		Name:        node.Name,
		Labels:      node.Labels,
		Annotations: node.Annotations,
	}
	created, err := client.CoreV1().Nodes().Create(ctx, object, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create node %s: %w", node.Name, err)
	}
	created.Status = *node.Status.DeepCopy()
	refreshConditions(&created.Status, metav1.Now())
	updated, err := client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("node %s status: %w", node.Name, err)
	}
	return updated, nil
}

// CreateNodes creates every node in order.
func CreateNodes(ctx context.Context, client kubernetes.Interface, nodes []corev1.Node) error {
	for i := range nodes {
		if _, err := CreateNode(ctx, client, &nodes[i]); err != nil {
			return err
		}
	}
	return nil
}

// refreshConditions makes the conditions current (a file's heartbeat
// times are long past) and adds Ready=True if there is no Ready condition.
func refreshConditions(status *corev1.NodeStatus, now metav1.Time) {
	ready := false
	for i := range status.Conditions {
		status.Conditions[i].LastHeartbeatTime = now
		status.Conditions[i].LastTransitionTime = now
		ready = ready || status.Conditions[i].Type == corev1.NodeReady
	}
	if !ready {
		status.Conditions = append(status.Conditions, corev1.NodeCondition{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now,
		})
	}
}
