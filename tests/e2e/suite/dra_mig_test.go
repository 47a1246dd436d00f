package suite_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// MIG devices through DRA (issue I §4): an A100 whose GPU 0 is in MIG mode
// publishes its seven 1g.10gb MIG devices in its ResourceSlice, as NVIDIA's
// driver does; a DeviceClass per profile selects them, and the policy's
// deviceClassMappings make a claim for one count as nvidia.com/mig-1g.10gb,
// the device plugin's resource name, so that one quota covers both.

// TestDraMigDevicesAreAllocatedAndChargedAsTheirProfile: a DRA-only DGX
// H100 and a DRA-only A100 (gpu-0 as seven 1g.10gb MIG devices, gpu-1
// whole); team-a has 3 nvidia.com/mig-1g.10gb in the A100 flavor. gpusched
// shows the A100's MIG pool (7 instances) and its one whole GPU. Three
// pods, each claiming one device of class mig-1g.10gb.nvidia.com, bind on
// the A100 with three different MIG devices kube-scheduler allocated; the
// queue uses 3 nvidia.com/mig-1g.10gb and gpusched counts 3 of the pool's
// instances used, each held by its pod (once: not also by its claim). A
// fourth such pod waits for quota, unbound.
func TestDraMigDevicesAreAllocatedAndChargedAsTheirProfile(t *testing.T) {
	policy := writePolicy(t, cluster.KueuePolicy{
		Flavors: map[string]map[string]string{"a100": {"nvidia.com/gpu.product": cluster.A100Product}},
		Queues: []cluster.ClusterQueue{{Name: "team-a", CPUs: 64, Flavor: "a100",
			Extra:       map[string]int{cluster.Mig1g10gbResource: 3},
			LocalQueues: []cluster.LocalQueue{{Namespace: cluster.Namespace, Name: "team-a"}}}},
		SchedulerConfig: &cluster.SchedulerConfig{Name: "config", DeviceClassMappings: map[string][]string{
			cluster.GpuResource: {cluster.NvidiaGpuClass}, cluster.Mig1g10gbResource: {cluster.Mig1g10gbClass}}},
	})
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy,
		ControllerManager: &controlplane.ControllerManager{Controllers: []string{"resourceclaim-controller"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	const migNode = "dra-a100-0"
	cluster.SetUpDraCluster(ctx, t, cp, draNodes[0])
	cluster.SetUpDraMigNode(ctx, t, cp, migNode)
	createClaimTemplates(ctx, t, cp, cluster.ClaimTemplate("one-mig", cluster.Mig1g10gbClass, 1))
	view := waitGpuschedMigPool(ctx, t, cp, migNode, 7, 0)
	if len(view.Gpus) != 1 || view.Gpus[0].DraDevice != "gpu-1" {
		t.Errorf("gpusched shows %s's whole GPUs as %+v; want gpu-1 only (gpu-0 is in MIG mode)", migNode, view.Gpus)
	}
	if view.Dra == nil || view.Dra.Devices != 8 {
		t.Errorf("gpusched shows %s's DRA devices as %+v; want 8 (7 MIG, 1 GPU)", migNode, view.Dra)
	}

	migPod := func(name string) *cluster.PodBuilder {
		return cluster.NewPod(cluster.Namespace, name).SchedulerName(cluster.SchedulerName).
			Label(cluster.QueueLabel, "team-a").ClaimFromTemplate(draPodClaim, "one-mig")
	}
	var pods []corev1.Pod
	for i := 0; i < 3; i++ {
		pod := createAndWaitBound(ctx, t, cp, migPod(fmt.Sprintf("mig-%d", i)))
		if pod.Spec.NodeName != migNode {
			t.Errorf("%s bound to %s, want %s (the only MIG devices)", pod.Name, pod.Spec.NodeName, migNode)
		}
		pods = append(pods, *pod)
	}
	devices := waitClaimsAllocated(ctx, t, cp, pods, 1)
	checkDevicesDisjoint(t, devices)
	migDevices := map[string]bool{}
	for _, d := range cluster.DraMigSlice(migNode).Spec.Devices {
		migDevices[d.Name] = *d.Attributes["type"].StringValue == "mig"
	}
	for pod, list := range devices {
		for _, d := range list {
			if !migDevices[d.device] {
				t.Errorf("%s allocated %s, not one of %s's MIG devices", pod, d.device, migNode)
			}
		}
	}
	waitQueueUsage(ctx, t, cp, "team-a", cluster.Mig1g10gbResource, 3)
	// Each instance once: held by its pod, not by the pod and its claim.
	view = waitGpuschedMigPool(ctx, t, cp, migNode, 7, 3)
	want := []string{"e2e/mig-0", "e2e/mig-1", "e2e/mig-2"}
	if pool := view.Mig[0]; !slices.Equal(pool.Pods, want) {
		t.Errorf("gpusched: %s's %s held by %v, want %v", migNode, pool.Resource, pool.Pods, want)
	}

	over := createPending(ctx, t, cp, migPod("mig-3"))
	waitForReason(ctx, t, cp, "Pod", "WaitingForQuota", []string{over})
	holdUnbound(ctx, t, cp, over, 2*time.Second)
	checkGpuschedNotForbidden(t, cp)
}

// waitGpuschedMigPool waits until gpusched's /v1/nodes shows the node's
// 1g.10gb MIG pool with `capacity` instances, `used` of them in use, and
// returns the node as gpusched shows it.
func waitGpuschedMigPool(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, node string, capacity, used int) cluster.GpuschedNode {
	t.Helper()
	var last string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		nodes, err := cluster.GpuschedNodes(ctx, cp.GpuschedURL)
		last = fmt.Sprintf("node not shown (%v)", err)
		for _, n := range nodes {
			if n.Name != node {
				continue
			}
			last = fmt.Sprintf("MIG pools %+v", n.Mig)
			for _, pool := range n.Mig {
				if pool.Resource == cluster.Mig1g10gbResource && pool.Capacity == capacity && pool.Used == used {
					return n
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("gpusched /v1/nodes after 20 s: %s: %s; want %s capacity %d, used %d",
				node, last, cluster.Mig1g10gbResource, capacity, used)
		}
	}
}
