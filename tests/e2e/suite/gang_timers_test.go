package suite_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// The queueing core's gang timers, carried out in the cluster: a running
// gang that loses a member is evicted whole once its grace period is over,
// and an admitted gang whose members do not all bind in time is rolled
// back (its bound members evicted, its quota and GPUs given back).

const blockerLabel = "e2e.gpusched.io/blocker"

// timerPolicy: queuePolicy's team-a with `gpus` H100 GPUs, and a
// SchedulerConfig with the given gang timers.
func timerPolicy(t *testing.T, gpus int, gang map[string]string) string {
	t.Helper()
	return writePolicy(t, cluster.KueuePolicy{Queues: cluster.ResearchQueues(cluster.Namespace, map[string]int{"team-a": gpus}),
		SchedulerConfig: &cluster.SchedulerConfig{Name: "config", Gang: gang}})
}

// TestGangShortOfAMemberIsEvictedWholeAfterItsGracePeriod: a gang of 4 x 4
// runs; one member fails. The other three keep running through the grace
// period (a replacement could still come), then all three are evicted
// through the Eviction API, and the gang's GPUs go to the next gang.
func TestGangShortOfAMemberIsEvictedWholeAfterItsGracePeriod(t *testing.T) {
	const grace = 6 * time.Second
	policy := timerPolicy(t, 32, map[string]string{"staleGangGracePeriod": grace.String()})
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	queuedGang(ctx, t, cp, "team-a", "train", 4, 4, nil)
	pods := waitGangBound(ctx, t, cp, "train", 4, 30*time.Second)
	failed := pods[0].Name
	if _, err := cluster.WaitRunning(ctx, cp.Client, cluster.Namespace, failed, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	failedAt := markFailed(ctx, t, cp, failed)

	// Inside the grace period the rest keep running.
	for time.Since(failedAt) < grace-2*time.Second {
		if alive := runningMembers(ctx, t, cp, "train"); alive != 3 {
			t.Fatalf("%d members running %v after %s failed, inside the %v grace period; want 3",
				alive, time.Since(failedAt).Round(time.Millisecond), failed, grace)
		}
		time.Sleep(250 * time.Millisecond)
	}
	waitOnlyFailedLeft(ctx, t, cp, "train", failed, grace+45*time.Second)
	if gone := time.Since(failedAt); gone < grace {
		t.Errorf("the gang was evicted %v after a member failed, before its %v grace period", gone, grace)
	}
	waitForReason(ctx, t, cp, "Pod", "Evicted", survivorsOf(pods, failed))
	// Its quota and GPUs are free again: a gang of the whole cluster fits.
	queuedGang(ctx, t, cp, "team-a", "next", 4, 8, nil)
	checkGangPlacementGpus(t, waitGangBound(ctx, t, cp, "next", 4, 60*time.Second), 8)
}

// TestAdmittedGangThatCannotBindInTimeIsRolledBack: a gang of 2 x 4 where
// one member has a required pod anti-affinity that kube-scheduler enforces
// and gpusched does not model, so that member never binds. After the
// admission timeout gpusched rolls the gang back: the bound member is
// evicted, so is the ungated one that could not bind, each pod is told
// why, and the GPUs go to the next gang.
func TestAdmittedGangThatCannotBindInTimeIsRolledBack(t *testing.T) {
	const timeout = 8 * time.Second
	policy := timerPolicy(t, 32, map[string]string{"admissionTimeout": timeout.String(), "backoffBase": "1s", "backoffMax": "2s"})
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	nodes := cluster.SetUpDemoCluster(ctx, t, cp)
	placeBlockers(ctx, t, cp, nodes)
	createStuckGang(ctx, t, cp)
	bound, err := cluster.WaitBound(ctx, cp.Client, cluster.Namespace, "stuck-0", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	boundAt := time.Now()
	t.Logf("stuck-0 bound to %s; stuck-1 cannot bind (anti-affinity)", bound.Spec.NodeName)
	waitGangGone(ctx, t, cp, "stuck", timeout+60*time.Second)
	if gone := time.Since(boundAt); gone < timeout-2*time.Second {
		t.Errorf("rolled back %v after the first member bound, before the %v admission timeout", gone, timeout)
	}
	waitForReason(ctx, t, cp, "Pod", "PodsReadyTimeout", []string{"stuck-0", "stuck-1"})
	queuedGang(ctx, t, cp, "team-a", "next", 4, 8, nil)
	checkGangPlacementGpus(t, waitGangBound(ctx, t, cp, "next", 4, 60*time.Second), 8)
}

// markFailed sets the pod's phase to Failed through the status subresource,
// as a kubelet does when its container exits non-zero.
func markFailed(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string) time.Time {
	t.Helper()
	pods := cp.Client.CoreV1().Pods(cluster.Namespace)
	for attempt := 0; ; attempt++ {
		pod, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pod.Status.Phase = corev1.PodFailed
		pod.Status.Reason = "Error"
		if _, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err == nil {
			return time.Now()
		} else if attempt == 5 {
			t.Fatalf("mark %s Failed: %v", name, err)
		}
	}
}

func runningMembers(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, group string) int {
	n := 0
	for _, p := range gangPods(ctx, t, cp, group) {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			n++
		}
	}
	return n
}

// waitOnlyFailedLeft waits until the group's only pod is the failed one.
func waitOnlyFailedLeft(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, group, failed string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		pods := gangPods(ctx, t, cp, group)
		names := []string{}
		for _, p := range pods {
			names = append(names, p.Name+"="+string(p.Status.Phase))
		}
		if len(pods) == 1 && pods[0].Name == failed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gang %s after %v: %s; want only the failed %s left", group, timeout, strings.Join(names, " "), failed)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func survivorsOf(pods []corev1.Pod, failed string) []string {
	out := []string{}
	for _, p := range pods {
		if p.Name != failed {
			out = append(out, p.Name)
		}
	}
	return out
}

// createStuckGang creates the Kueue pod group "stuck" of 2 x 4 GPUs whose
// second member must not share a node with a blocker.
func createStuckGang(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	for i := 0; i < 2; i++ {
		pod := cluster.GpuPod(fmt.Sprintf("stuck-%d", i), 4).
			Label("kueue.x-k8s.io/queue-name", "team-a").
			Label("kueue.x-k8s.io/pod-group-name", "stuck").
			Annotation("kueue.x-k8s.io/pod-group-total-count", "2").Build()
		if i == 1 {
			pod.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{blockerLabel: "true"}},
					TopologyKey:   "kubernetes.io/hostname",
				}},
			}}
		}
		if _, err := cp.Client.CoreV1().Pods(cluster.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// placeBlockers binds a pod labelled blockerLabel, with no GPUs, to every
// GPU node, as another scheduler would.
func placeBlockers(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, nodes []corev1.Node) {
	t.Helper()
	for _, node := range nodes {
		b := cluster.NewPod(cluster.Namespace, "blocker-"+node.Name).
			SchedulerName(cluster.DefaultScheduler).NodeName(node.Name).Label(blockerLabel, "true")
		if _, err := b.Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
	}
}
