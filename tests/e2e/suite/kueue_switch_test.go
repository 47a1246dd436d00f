package suite_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"gpusched.io/e2e/suite/arena"
	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// TestSwitchFromKueueKeepsWhatItAdmittedAndReleasesWhatItHeld is the
// README's switch, small: under Kueue v0.17.0 a pod group runs (admitted by
// Kueue, bound by the default scheduler) and fills its ClusterQueue's 8
// GPUs, and a second group waits behind Kueue's gate. Kueue's manager is
// stopped and its webhook configurations deleted, then gpusched starts on
// the same objects. gpusched adopts the running group with its quota (the
// waiting group stays gated while it runs: no poll sees the queue over its
// 8 GPUs), and once it has finished admits the second group by lifting
// Kueue's gate, pinned to its nodes, which the default scheduler binds. A
// third group, made for the default scheduler after the switch as Kueue's
// users make pods, is moved to gpusched's profile and gated by gpusched's
// webhook, and admitted in its turn. No pod is evicted or recreated: every
// pod keeps its uid. Once the groups Kueue made have ended, gpusched has
// released the kueue.x-k8s.io/managed finalizer Kueue's webhook put on
// their pods, so a deleted one goes rather than hang in Terminating.
func TestSwitchFromKueueKeepsWhatItAdmittedAndReleasesWhatItHeld(t *testing.T) {
	cp, kueue := startBesideKueue(t)
	// The cluster's own scheduler, beside gpusched's (whose kube-scheduler
	// has only the gpusched profile): it binds what Kueue admits, before
	// the switch and after.
	cp.StartBenchScheduler(controlplane.BenchSchedulerOptions{Name: "default", Config: func(config map[string]any) {
		arena.DefaultSchedulerProfile(config)
		config["leaderElection"] = map[string]any{"leaderElect": false}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	allowGpuschedToReadKueueObjects(ctx, t, cp)
	if err := controlplane.EnsureNamespace(ctx, cp.Client, kueueOnlyNamespace); err != nil {
		t.Fatal(err)
	}
	applyKueuePolicy(ctx, t, kueue, kueueOnlyNamespace, 8)
	cluster.CreateDemoCluster(ctx, t, cp)

	running := arena.PodGroup{Namespace: kueueOnlyNamespace, Queue: arenaQueue, Name: "running", Size: 2, GPUs: 4}
	createKueueGroup(ctx, t, cp, running, 25*time.Second)
	waitGroup(ctx, t, cp, running, admittedAndBound)
	held := arena.PodGroup{Namespace: kueueOnlyNamespace, Queue: arenaQueue, Name: "held", Size: 2, GPUs: 4}
	createKueueGroup(ctx, t, cp, held, time.Second)
	if _, err := kueue.WaitCondition(ctx, arena.WorkloadResource, kueueOnlyNamespace, held.Name, "QuotaReserved", arena.IsFalse, cluster.SettleTimeout); err != nil {
		t.Fatal(err)
	}
	uids := podUIDs(ctx, t, cp)

	if err := kueue.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	cp.StartGpusched()
	waitWebhookAdoptsDefaultSchedulerPods(ctx, t, cp)
	after := arena.PodGroup{Namespace: kueueOnlyNamespace, Queue: arenaQueue, Name: "after", Size: 2, GPUs: 4}
	createKueueGroup(ctx, t, cp, after, time.Second)
	for _, pod := range podsIn(ctx, t, cp) {
		if pod.Labels[arena.PodGroupNameLabel] == after.Name &&
			(pod.Spec.SchedulerName != cluster.SchedulerName || !slices.Equal(gateNames(&pod), []string{controlplane.WebhookGate})) {
			t.Errorf("pod %s made for the default scheduler after the switch: scheduler %s, gates %v; want %s, [%s]",
				pod.Name, pod.Spec.SchedulerName, gateNames(&pod), cluster.SchedulerName, controlplane.WebhookGate)
		}
	}

	// Until the held and later groups run, no poll may see more than 8
	// GPUs bound.
	deadline := time.Now().Add(cluster.SettleTimeout + 30*time.Second)
	for {
		pods := podsIn(ctx, t, cp)
		bound, laterBound := 0, 0
		for i := range pods {
			if pods[i].Status.Phase == corev1.PodRunning || (cluster.Bound(&pods[i]) && pods[i].Status.Phase == corev1.PodPending) {
				bound += cluster.PodGpus(&pods[i])
			}
			if g := pods[i].Labels[arena.PodGroupNameLabel]; (g == held.Name || g == after.Name) && cluster.Bound(&pods[i]) {
				laterBound++
			}
		}
		if bound > 8 {
			t.Fatalf("%d GPUs bound in a ClusterQueue of 8: %v", bound, podStates(pods))
		}
		if laterBound == held.Size+after.Size {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the held and later groups were never all bound: %v", podStates(pods))
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, pod := range podsIn(ctx, t, cp) {
		if uid, ok := uids[pod.Name]; ok && uid != pod.UID {
			t.Errorf("pod %s was recreated (uid %s, was %s)", pod.Name, pod.UID, uid)
		}
		if pod.Labels[arena.PodGroupNameLabel] == held.Name && len(pod.Spec.SchedulingGates) != 0 {
			t.Errorf("pod %s still gated: %v", pod.Name, pod.Spec.SchedulingGates)
		}
	}
	if len(uids) != running.Size+held.Size {
		t.Errorf("%d pods before the switch, want %d", len(uids), running.Size+held.Size)
	}
	waitKueueFinalizersReleased(ctx, t, cp, running.Size+held.Size, "running-0")
	evictions, err := cp.Client.CoreV1().Events(kueueOnlyNamespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=Preempted"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evictions.Items) != 0 {
		t.Errorf("%d Preempted events after the switch", len(evictions.Items))
	}
}

// Kueue's pod webhook marks the pods it manages with a label and a
// finalizer of this one name.
const kueueManaged = "kueue.x-k8s.io/managed"

// waitKueueFinalizersReleased waits until `made` pods carried Kueue's
// finalizer, every one of them has ended and none carries it any more,
// then deletes pod `name` and sees it gone.
func waitKueueFinalizersReleased(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, made int, name string) {
	t.Helper()
	var last []string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, cluster.SettleTimeout, true, func(ctx context.Context) (bool, error) {
		last = nil
		managed := 0
		for _, pod := range podsIn(ctx, t, cp) {
			if pod.Labels[kueueManaged] != "true" {
				continue
			}
			managed++
			ended := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
			if !ended || slices.Contains(pod.Finalizers, kueueManaged) {
				last = append(last, fmt.Sprintf("%s:%s finalizers=%v", pod.Name, pod.Status.Phase, pod.Finalizers))
			}
		}
		return managed == made && len(last) == 0, nil
	})
	if err != nil {
		t.Fatalf("Kueue's finalizer not released from the ended pods Kueue made: %v", last)
	}
	if err := cp.Client.CoreV1().Pods(kueueOnlyNamespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cp.Client.CoreV1().Pods(kueueOnlyNamespace).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("pod %s, deleted, is still there", name)
	}
}

// waitWebhookAdoptsDefaultSchedulerPods creates queued pods for the
// default scheduler, with no GPUs, in a namespace of their own (their
// queue does not exist) until one comes back moved to gpusched: the API
// server calls a webhook only once it has learnt the caBundle gpusched
// writes, and creates pods unchanged until then (failurePolicy Ignore).
func waitWebhookAdoptsDefaultSchedulerPods(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	const ns = "switch-probe"
	if err := controlplane.EnsureNamespace(ctx, cp.Client, ns); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		pod := createPod(ctx, t, cp, cluster.NewPod(ns, fmt.Sprintf("probe-%d", i)).Label(arena.QueueNameLabel, "probe"))
		if pod.Spec.SchedulerName == cluster.SchedulerName {
			t.Logf("the webhook moved probe-%d to %s", i, pod.Spec.SchedulerName)
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("gpusched's webhook never moved a queued default-scheduler pod: %v", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// createKueueGroup creates g for the default scheduler, as a user of
// Kueue does, its pods running for `runFor`.
func createKueueGroup(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, g arena.PodGroup, runFor time.Duration) {
	t.Helper()
	for i := range g.Size {
		pod := cluster.NewPod(g.Namespace, fmt.Sprintf("%s-%d", g.Name, i)).
			Gpus(g.GPUs).RunFor(runFor).
			Label(arena.QueueNameLabel, g.Queue).
			Label(arena.PodGroupNameLabel, g.Name).
			Annotation(arena.PodGroupTotalCountAnnotation, strconv.Itoa(g.Size)).
			Build()
		if _, err := cp.Client.CoreV1().Pods(g.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func podsIn(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) []corev1.Pod {
	t.Helper()
	list, err := cp.Client.CoreV1().Pods(kueueOnlyNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func podUIDs(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) map[string]types.UID {
	uids := map[string]types.UID{}
	for _, pod := range podsIn(ctx, t, cp) {
		uids[pod.Name] = pod.UID
	}
	return uids
}

func podStates(pods []corev1.Pod) []string {
	var out []string
	for _, pod := range pods {
		out = append(out, fmt.Sprintf("%s:%s@%s gates=%d", pod.Name, pod.Status.Phase, pod.Spec.NodeName, len(pod.Spec.SchedulingGates)))
	}
	return out
}
