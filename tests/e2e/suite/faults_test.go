package suite_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

const (
	// faultNotSynced is the start of gpusched's filter and bind Error
	// before its first complete list (api/server/extender_api.cc).
	faultNotSynced = "gpusched has not finished its first list of nodes and pods"
	// faultUnknownNode is gpusched's verdict for a node it does not know
	// (scheduler/extender_service.h): wrong, and final, before the list.
	faultUnknownNode = "node not known to gpusched"
	// faultMayStillLand is in gpusched's bind Error when the binding was
	// sent without a clear answer (scheduler/extender_service.cc).
	faultMayStillLand = "it may still land"
	// faultBindDeadline is gpusched's default --bind-deadline-ms and
	// faultHTTPTimeout kube-scheduler's httpTimeout for it
	// (deploy/kube-scheduler-config.yaml).
	faultBindDeadline = 3 * time.Second
	faultHTTPTimeout  = 5 * time.Second
	// faultInDoubtHold is how long gpusched holds the devices of a binding
	// in doubt before releasing them (bind_in_doubt_hold_ms), and
	// faultHoldExpired its log line when that happens.
	faultInDoubtHold = 30 * time.Second
	faultHoldExpired = "stayed in doubt past its hold"
)

// TestFilterAnswersErrorBeforeTheFirstCompleteList: while gpusched cannot
// finish its first list (every byte from the API server to it is held
// back), kube-scheduler's attempts fail with gpusched's Error, so the pod
// backs off and retries, instead of a verdict such as "node not known to
// gpusched". Once the API server answers, the pod binds.
func TestFilterAnswersErrorBeforeTheFirstCompleteList(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{GpuschedViaProxy: true,
		Run: &controlplane.Components{Scheduler: true, Kubelet: true}})
	ctx, cancel := context.WithTimeout(context.Background(), 75*time.Second)
	defer cancel()
	cluster.CreateDemoCluster(ctx, t, cp)
	// Longer than the test: not even gpusched's TLS handshake completes.
	cp.Proxy.SetResponseDelay(time.Hour)
	cp.StartGpuschedUntilListening()
	if ready, err := cluster.GpuschedReady(ctx, cp.GpuschedURL); err != nil || ready {
		t.Fatalf("gpusched /readyz before its first list: ready=%v err=%v, want 503", ready, err)
	}

	if _, err := cluster.GpuPod("early", 1).Create(ctx, cp.Client); err != nil {
		t.Fatal(err)
	}
	cluster.WaitFailedSchedulingContaining(ctx, t, cp.Client, "early", faultNotSynced, 20*time.Second)
	if pod, err := cp.Client.CoreV1().Pods(cluster.Namespace).Get(ctx, "early", metav1.GetOptions{}); err != nil || cluster.Bound(pod) {
		t.Fatalf("pod bound (or unreadable: %v) before gpusched listed the cluster", err)
	}

	// Lift the delay: held-back bytes are dropped with the connections,
	// gpusched lists again at once.
	cp.Proxy.SetResponseDelay(0)
	cp.Proxy.ResetConnections()
	pod, err := cluster.WaitRunning(ctx, cp.Client, cluster.Namespace, "early", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	messages, err := cluster.FailedSchedulingMessages(ctx, cp.Client, cluster.Namespace, "early")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range messages {
		if strings.Contains(m, faultUnknownNode) {
			t.Errorf("FailedScheduling %q: a verdict given before the first list", m)
		}
	}
	faultCheckLedger(ctx, t, cp.Client)
	t.Logf("bound to %s with GPUs %s after FailedScheduling %q", pod.Spec.NodeName, pod.Annotations[cluster.GpuIDsAnnotation], messages)
}

// TestKilledGpuschedRebuildsItsModelAndNeverGivesAGpuTwice: 40 pods asking
// for more GPUs than the demo cluster has; gpusched is SIGKILLed while
// binds are in flight and started again. It must rebuild its model from
// the API server (bound pods and their gpu-ids): once nothing more can
// bind, no device is held twice, every bound pod has its gpu-ids, and no
// pod waits while a node has room for it (a model that forgot a release
// would keep devices busy; one that forgot a bind would give them twice).
func TestKilledGpuschedRebuildsItsModelAndNeverGivesAGpuTwice(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{GpuschedViaProxy: true})
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
	defer cancel()
	cluster.CreateDemoCluster(ctx, t, cp)
	// A bind (a PATCH and a POST) takes at least 200 ms: some are in
	// flight whenever gpusched dies.
	cp.Proxy.SetResponseDelay(100 * time.Millisecond)
	sizes := make([]int, 40)
	for i := range sizes {
		sizes[i] = []int{1, 2, 1, 3, 2, 4, 1, 2}[i%8] // 80 GPUs; the cluster has 66
	}
	cluster.CreatePods(ctx, t, cp.Client, "burst", sizes)

	atKill := cluster.WaitBoundAtLeast(ctx, t, cp.Client, 10, 30*time.Second)
	cp.KillGpusched()
	if atKill >= len(sizes) {
		t.Fatalf("all %d pods bound before gpusched was killed: the kill tested nothing", atKill)
	}
	cp.StartGpusched()

	ledger := faultWaitSettled(ctx, t, cp, 45*time.Second)
	for _, p := range ledger.Problems {
		t.Error(p)
	}
	faultCheckModel(ctx, t, cp, 10*time.Second)
	t.Logf("%d pods bound when gpusched was killed; %d pending once settled", atKill, len(ledger.Pending))
}

// TestApiServerRestartLosesNoUpdate restarts kube-apiserver (etcd kept)
// while pods come and go. gpusched keeps running and serving, and no
// update is lost across its watches' reconnection: a pod deleted right
// after the restart frees its devices (a pod needing exactly those binds
// on them), and gpusched's model ends equal to the API server's pods.
func TestApiServerRestartLosesNoUpdate(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
	defer cancel()
	cluster.CreateDemoCluster(ctx, t, cp)
	pid := cp.Pid(controlplane.Gpusched)
	// dgx-h100-3 is filled by two 4-GPU pods: the devices of one of them
	// are then the only ones a 4-GPU pod pinned there can get.
	held := cluster.RunPinned(ctx, t, cp, "dgx-h100-3", "held-0", "held-1")
	cluster.CreatePods(ctx, t, cp.Client, "steady", []int{1, 2, 1, 2, 1, 2, 1, 2})
	if _, err := cluster.WaitForPods(ctx, cp.Client, cluster.Namespace, cluster.AllBound(10), 30*time.Second); err != nil {
		t.Fatal(err)
	}

	churn := faultRestartAPIServerUnderChurn(ctx, t, cp)
	faultCheckFreedDevicesReused(ctx, t, cp, held[0])
	faultCheckSettledAfterRestart(ctx, t, cp)
	if now := cp.Pid(controlplane.Gpusched); now != pid {
		t.Errorf("gpusched pid %d, was %d: it restarted", now, pid)
	}
	t.Logf("churn: %d pods created, %d deleted, %d API errors around the restart", churn.count(), churn.deletedCount(), churn.errorCount())
}

// faultRestartAPIServerUnderChurn restarts kube-apiserver while pods are
// created and deleted, stops the churn once it went on after the restart,
// and waits until kube-scheduler binds a pod again. It returns the stopped
// churn.
func faultRestartAPIServerUnderChurn(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) *faultChurn {
	t.Helper()
	churn := faultStartChurn(ctx, cp.Client)
	churn.waitCreated(t, 3, 10*time.Second)
	cp.RestartAPIServer()
	churn.waitCreated(t, churn.count()+3, 20*time.Second)
	// The churn stops before held-0 goes: binpack scoring would send its
	// 1-GPU pods to the devices held-0 frees, which "reuse" must get.
	churn.stop()
	// kube-scheduler's own informers come back after the restart on their
	// own backoff; a pod deleted before its pod informer relists can be
	// missed by its queue (an upstream race: the next pod then waits for
	// kube-scheduler's periodic flush), and this test is about gpusched. A
	// probe pod bound after the restart shows kube-scheduler sees pods again.
	cluster.CreatePods(ctx, t, cp.Client, "probe", []int{1})
	if _, err := cluster.WaitBound(ctx, cp.Client, cluster.Namespace, "probe-0", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	return churn
}

// faultCheckFreedDevicesReused deletes held (held-0, one of two 4-GPU pods
// filling dgx-h100-3) after the restart: a 4-GPU pod pinned there must get
// exactly the GPUs it freed.
func faultCheckFreedDevicesReused(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, held corev1.Pod) {
	t.Helper()
	freed := cluster.SortedGpuIDs(t, held)
	cluster.DeleteAndWaitGone(ctx, t, cp.Client, held.Name)
	reuse := cluster.RunPinned(ctx, t, cp, "dgx-h100-3", "reuse")[0]
	if got := cluster.SortedGpuIDs(t, reuse); !slices.Equal(got, freed) {
		t.Errorf("pod reuse got GPUs %v on dgx-h100-3, want %v: the ones held-0 freed after the restart", got, freed)
	}
}

// faultCheckSettledAfterRestart: pods created after the restart bind
// wherever there is room, no device is held twice, and gpusched's model
// ends equal to the API server's pods.
func faultCheckSettledAfterRestart(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	cluster.CreatePods(ctx, t, cp.Client, "after", []int{1, 2, 4})
	ledger := faultWaitSettled(ctx, t, cp, 30*time.Second)
	if len(ledger.Pending) > 0 {
		t.Errorf("%d pods still pending after the restart, with room in the cluster", len(ledger.Pending))
	}
	for _, p := range ledger.Problems {
		t.Error(p)
	}
	faultCheckModel(ctx, t, cp, 15*time.Second)
}

// TestEveryAnswerComesInsideTheHttpTimeoutWhenTheApiServerIsSlow: the API
// server answers gpusched 4 s late (requests land at once, answers are
// held back): longer than gpusched's 3 s bind deadline, shorter than
// kube-scheduler's 5 s httpTimeout plus a margin. Every answer must still
// reach kube-scheduler within its httpTimeout; binds answer an Error ("may
// still land"); a Binding that lands anyway is followed from the watch, so
// its in-doubt hold never runs out; no device is given twice, to the pods
// placed while slow or after; once the API server is fast again everything
// binds.
func TestEveryAnswerComesInsideTheHttpTimeoutWhenTheApiServerIsSlow(t *testing.T) {
	// Every fitting node in filter's reply (deploy/ keeps only the best),
	// so that kube-scheduler calls prioritize too and its answers are timed.
	cp := controlplane.Start(t, controlplane.Options{GpuschedViaProxy: true,
		GpuschedArgs: []string{"--filter-keep-best=0"}})
	ctx, cancel := context.WithTimeout(context.Background(), 85*time.Second)
	defer cancel()
	cluster.CreateDemoCluster(ctx, t, cp)

	cp.Proxy.SetResponseDelay(4 * time.Second)
	slow := cluster.CreatePods(ctx, t, cp.Client, "slow", []int{1, 2, 1, 2})
	for _, name := range slow {
		cluster.WaitFailedSchedulingContaining(ctx, t, cp.Client, name, "binding "+cluster.Namespace+"/"+name, 30*time.Second)
	}
	cp.Proxy.SetResponseDelay(0)
	// A bind started just before this answers within the deadline; its
	// hold, if any, ends the hold time after that.
	holdsEnd := time.Now().Add(faultBindDeadline + faultInDoubtHold)
	cluster.CreatePods(ctx, t, cp.Client, "fast", []int{1, 2, 4, 1})
	if _, err := cluster.WaitForPods(ctx, cp.Client, cluster.Namespace, cluster.AllBound(8), 30*time.Second); err != nil {
		t.Fatal(err)
	}

	faultCheckNoExtenderTimeout(t, cp)
	faultCheckAnswerDurations(t, cp, "filter", "prioritize", "bind")
	faultCheckLedger(ctx, t, cp.Client)
	faultCheckModel(ctx, t, cp, 10*time.Second)
	faultCheckHoldsSettledByWatch(ctx, t, cp, holdsEnd)
	landed := faultLandedInDoubt(ctx, t, cp.Client, slow)
	if len(landed) == 0 {
		t.Errorf("no Binding landed after gpusched answered %q: that case was not exercised", faultMayStillLand)
	}
	t.Logf("Bindings that landed after a %q Error: %v", faultMayStillLand, landed)
}
