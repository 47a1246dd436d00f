package suite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// writeGangPolicy: one ClusterQueue of 32 H100 GPUs (the demo cluster's
// four DGX H100), reached from the test namespace through LocalQueue q. As
// in Kueue, every resource a pod requests must be covered: the test pods
// request cpu too.
func writeGangPolicy(t *testing.T) string {
	t.Helper()
	return writePolicy(t, cluster.KueuePolicy{Queues: []cluster.ClusterQueue{{Name: "team-a", GPUs: 32, CPUs: 64,
		LocalQueues: []cluster.LocalQueue{{Namespace: cluster.Namespace, Name: "q"}}}}})
}

// kueueGangPod is member i of a Kueue pod group of count pods in queue q.
func kueueGangPod(group string, i, count, gpus int) *cluster.PodBuilder {
	return cluster.GpuPod(fmt.Sprintf("%s-%d", group, i), gpus).
		Label("kueue.x-k8s.io/queue-name", "q").
		Label("kueue.x-k8s.io/pod-group-name", group).
		Annotation("kueue.x-k8s.io/pod-group-total-count", fmt.Sprint(count))
}

// TestGangIsHeldByTheGateAndBoundWhole: a gang of 4 x 4 GPUs whose pods are
// created one by one a second apart through the real API server. The
// webhook gates each; none is bound before the fourth exists; then the
// admission loop (on its own, no filter call involved) lifts every gate and
// pins each member to its node, and kube-scheduler binds all four there,
// through gpusched's bind, with disjoint GPUs.
func TestGangIsHeldByTheGateAndBoundWhole(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: writeGangPolicy(t)})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	const members = 4
	for i := 0; i < members; i++ {
		pod, err := kueueGangPod("ring", i, members, 4).Create(ctx, cp.Client)
		if err != nil {
			t.Fatal(err)
		}
		if gates := gateNames(pod); len(gates) != 1 || gates[0] != controlplane.WebhookGate {
			t.Fatalf("member %d created with gates %v, want [%s]", i, gates, controlplane.WebhookGate)
		}
		if i < members-1 {
			time.Sleep(time.Second)
			checkNoneBound(ctx, t, cp)
		}
	}
	checkGangPlacement(t, waitAllBound(ctx, t, cp, members), 4)
}

// waitAllBound waits until `members` pods of the test namespace are bound
// and logs how long that took from the call.
func waitAllBound(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, members int) []corev1.Pod {
	t.Helper()
	lastCreated := time.Now()
	pods, err := cluster.WaitForPods(ctx, cp.Client, cluster.Namespace, func(pods []corev1.Pod) bool {
		return countBound(pods) == members
	}, 60*time.Second)
	if err != nil {
		t.Fatalf("gang not bound whole: %v", err)
	}
	t.Logf("all %d members bound %v after the last was created", members, time.Since(lastCreated).Round(time.Millisecond))
	return pods
}

func checkNoneBound(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	list, err := cp.Client.CoreV1().Pods(cluster.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if p.Spec.NodeName != "" || len(p.Spec.SchedulingGates) == 0 {
			t.Errorf("pod %s bound to %q with gates %v before its gang is complete", p.Name, p.Spec.NodeName, gateNames(&p))
		}
	}
}

// checkGangPlacement: every member is ungated, bound to the node gpusched
// assigned it, carries its GPU ids, and no GPU of a node is given twice.
func checkGangPlacement(t *testing.T, pods []corev1.Pod, gpus int) {
	t.Helper()
	for i := range pods {
		p := &pods[i]
		if len(p.Spec.SchedulingGates) != 0 {
			t.Errorf("%s: bound but still gated %v", p.Name, gateNames(p))
		}
		if assigned := p.Annotations["gpusched.io/assigned-node"]; assigned != p.Spec.NodeName {
			t.Errorf("%s: bound to %s, assigned %q", p.Name, p.Spec.NodeName, assigned)
		}
	}
	checkGangPlacementGpus(t, pods, gpus)
}
