package suite_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"gpusched.io/e2e/suite/arena"
	"gpusched.io/e2e/suite/cluster"
)

// resourceFlavorResource is Kueue's ResourceFlavor at its storage version.
var resourceFlavorResource = schema.GroupVersionResource{Group: arena.KueueGroup, Version: "v1beta2", Resource: "resourceflavors"}

// dcTopology is a Kueue Topology of the demo cluster's levels, widest
// first.
const dcTopology = `apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata:
  name: dc
spec:
  levels:
  - nodeLabel: gpusched.io/block
  - nodeLabel: gpusched.io/rack
  - nodeLabel: kubernetes.io/hostname
`

// TestKueueRequiredTopologyKeepsAPodGroupInOneRack: with its policy from
// Kueue's objects (a Topology, and the H100 flavor naming it, applied
// through Kueue v0.17.0's webhooks), gpusched reads Kueue's pod annotation
// kueue.x-k8s.io/podset-required-topology as its own. Three racks have 6
// of their 8 GPUs free, the fourth all 8: a pod group of 4 x 2 GPUs that
// requires gpusched.io/rack lands whole on that fourth rack, though the
// fuller racks, which GPU packing prefers, could hold it across them.
func TestKueueRequiredTopologyKeepsAPodGroupInOneRack(t *testing.T) {
	cp, kueue := startBesideKueue(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	allowGpuschedToReadKueueObjects(ctx, t, cp)
	if err := kueue.ApplyKueueObjects(ctx, dcTopology); err != nil {
		t.Fatal(err)
	}
	applyKueuePolicy(ctx, t, kueue, cluster.Namespace, 32)
	patch := `{"spec":{"topologyName":"dc"}}`
	if _, err := kueue.Dynamic.Resource(resourceFlavorResource).Patch(ctx, cluster.H100Flavor, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kueue.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	cp.StartGpusched()
	cluster.CreateDemoCluster(ctx, t, cp)
	waitReadyz(ctx, t, cp, "refusing to decide", false)

	for _, node := range []string{"dgx-h100-0", "dgx-h100-1", "dgx-h100-2"} {
		pin := arena.PodGroup{Namespace: cluster.Namespace, Queue: arenaQueue, Name: "pin-" + node, Size: 1, GPUs: 2}
		pod := pin.Pods()[0]
		pod.Spec.SchedulerName = cluster.SchedulerName
		pod.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
		if _, err := cp.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitKueueGroupBound(ctx, t, cp, pin)
	}

	ring := arena.PodGroup{Namespace: cluster.Namespace, Queue: arenaQueue, Name: "ring", Size: 4, GPUs: 2}
	for _, pod := range ring.Pods() {
		pod.Spec.SchedulerName = cluster.SchedulerName
		pod.Annotations["kueue.x-k8s.io/podset-required-topology"] = "gpusched.io/rack"
		if _, err := cp.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitKueueGroupBound(ctx, t, cp, ring)
	racks := map[string]bool{}
	for _, pod := range podsOf(ctx, t, cp, ring) {
		node, err := cp.Client.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		racks[node.Labels["gpusched.io/rack"]] = true
		t.Logf("%s on %s (rack %s)", pod.Name, pod.Spec.NodeName, node.Labels["gpusched.io/rack"])
	}
	if len(racks) != 1 || !racks["rack-4"] {
		t.Fatalf("pod group ring spans racks %v; want all in rack-4, the one rack with 8 free GPUs", racks)
	}
}
