package arena

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/cluster"
)

// nodeTemplate is the demo cluster's node the arena's nodes copy: a DGX
// H100 whose topology is gpusched's documented default.
const nodeTemplate = "dgx-h100-2"

// ScenarioNodes are copies of the template, arena-node-NNN, group by group
// (NodeSpec.AllGroups), each with its group's GPUs as nvidia.com/gpu (and
// the GFD count label to match) and its group's labels.
func ScenarioNodes(repo string, s *Scenario) ([]corev1.Node, error) {
	demo, err := cluster.DemoNodes(repo)
	if err != nil {
		return nil, err
	}
	var template *corev1.Node
	for i := range demo {
		if demo[i].Name == nodeTemplate {
			template = &demo[i]
		}
	}
	if template == nil {
		return nil, fmt.Errorf("%s has no node %s", cluster.DemoClusterFile, nodeTemplate)
	}
	var nodes []corev1.Node
	for _, group := range s.Nodes.AllGroups() {
		for range group.Count {
			nodes = append(nodes, groupNode(template, group, len(nodes)))
		}
	}
	return nodes, nil
}

func groupNode(template *corev1.Node, group NodeGroup, i int) corev1.Node {
	gpus := resource.MustParse(strconv.Itoa(group.GPUs))
	{
		node := template.DeepCopy()
		node.Name = nodeName(i)
		node.Labels["kubernetes.io/hostname"] = node.Name
		node.Labels["nvidia.com/gpu.count"] = strconv.Itoa(group.GPUs)
		for k, v := range group.Labels {
			node.Labels[k] = v
		}
		node.Status.Capacity[cluster.GpuResource] = gpus
		node.Status.Allocatable[cluster.GpuResource] = gpus
		node.Spec.PodCIDR = fmt.Sprintf("10.%d.%d.0/24", 64+i/256, i%256)
		node.Status.Addresses = []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.20.%d.%d", i/250, 1+i%250)},
			{Type: corev1.NodeHostName, Address: node.Name},
		}
		return *node
	}
}

func nodeName(i int) string { return fmt.Sprintf("arena-node-%03d", i) }

// NodeLabels are the labels each scenario node gets from its group, by
// node name.
func NodeLabels(s *Scenario) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, group := range s.Nodes.AllGroups() {
		for range group.Count {
			out[nodeName(len(out))] = group.Labels
		}
	}
	return out
}

// CreateScenarioNodes registers the scenario's nodes as kubelets would.
func CreateScenarioNodes(ctx context.Context, client kubernetes.Interface, repo string, s *Scenario) error {
	nodes, err := ScenarioNodes(repo, s)
	if err != nil {
		return err
	}
	return cluster.Parallel(len(nodes), 8, func(i int) error {
		_, err := cluster.CreateNode(ctx, client, &nodes[i])
		return err
	})
}
