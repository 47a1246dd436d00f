package suite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

const (
	faultNamespace     = "e2e"
	faultHostnameLabel = "kubernetes.io/hostname"
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
	cp := controlplane.Start(t, controlplane.Options{GpuschedViaProxy: true, NoGpusched: true})
	ctx, cancel := context.WithTimeout(context.Background(), 75*time.Second)
	defer cancel()
	createDemoCluster(ctx, t, cp, faultNamespace)
	// Longer than the test: not even gpusched's TLS handshake completes.
	cp.Proxy.SetResponseDelay(time.Hour)
	cp.StartGpuschedNoWait()
	if ready, err := cluster.GpuschedReady(ctx, cp.GpuschedURL); err != nil || ready {
		t.Fatalf("gpusched /readyz before its first list: ready=%v err=%v, want 503", ready, err)
	}

	if _, err := faultGpuPod("early", 1).Create(ctx, cp.Client); err != nil {
		t.Fatal(err)
	}
	faultWaitMessage(ctx, t, cp.Client, "early", faultNotSynced, 20*time.Second)
	if pod, err := cp.Client.CoreV1().Pods(faultNamespace).Get(ctx, "early", metav1.GetOptions{}); err != nil || cluster.Bound(pod) {
		t.Fatalf("pod bound (or unreadable: %v) before gpusched listed the cluster", err)
	}

	// Lift the delay: held-back bytes are dropped with the connections,
	// gpusched lists again at once.
	cp.Proxy.SetResponseDelay(0)
	cp.Proxy.ResetConnections()
	pod, err := cluster.WaitRunning(ctx, cp.Client, faultNamespace, "early", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	messages, err := cluster.FailedSchedulingMessages(ctx, cp.Client, faultNamespace, "early")
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
	createDemoCluster(ctx, t, cp, faultNamespace)
	// A bind (a PATCH and a POST) takes at least 200 ms: some are in
	// flight whenever gpusched dies.
	cp.Proxy.SetResponseDelay(100 * time.Millisecond)
	sizes := make([]int, 40)
	for i := range sizes {
		sizes[i] = []int{1, 2, 1, 3, 2, 4, 1, 2}[i%8] // 80 GPUs; the cluster has 66
	}
	faultCreatePods(ctx, t, cp.Client, "burst", sizes)

	atKill := faultWaitBoundAtLeast(ctx, t, cp.Client, 10, 30*time.Second)
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
	createDemoCluster(ctx, t, cp, faultNamespace)
	pid := cp.Pid(controlplane.Gpusched)
	// dgx-h100-3 is filled by two 4-GPU pods: the devices of one of them
	// are then the only ones a 4-GPU pod pinned there can get.
	held := faultRunPinned(ctx, t, cp, "dgx-h100-3", "held-0", "held-1")
	faultCreatePods(ctx, t, cp.Client, "steady", []int{1, 2, 1, 2, 1, 2, 1, 2})
	if _, err := cluster.WaitForPods(ctx, cp.Client, faultNamespace, cluster.AllBound(10), 30*time.Second); err != nil {
		t.Fatal(err)
	}

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
	faultCreatePods(ctx, t, cp.Client, "probe", []int{1})
	if _, err := cluster.WaitBound(ctx, cp.Client, faultNamespace, "probe-0", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	freed := faultGpuIDs(t, held[0])
	faultDelete(ctx, t, cp.Client, "held-0")
	reuse := faultRunPinned(ctx, t, cp, "dgx-h100-3", "reuse")[0]

	if got := faultGpuIDs(t, reuse); !slices.Equal(got, freed) {
		t.Errorf("pod reuse got GPUs %v on dgx-h100-3, want %v: the ones held-0 freed after the restart", got, freed)
	}
	faultCreatePods(ctx, t, cp.Client, "after", []int{1, 2, 4})
	ledger := faultWaitSettled(ctx, t, cp, 30*time.Second)
	if len(ledger.Pending) > 0 {
		t.Errorf("%d pods still pending after the restart, with room in the cluster", len(ledger.Pending))
	}
	for _, p := range ledger.Problems {
		t.Error(p)
	}
	faultCheckModel(ctx, t, cp, 15*time.Second)
	if now := cp.Pid(controlplane.Gpusched); now != pid {
		t.Errorf("gpusched pid %d, was %d: it restarted", now, pid)
	}
	t.Logf("churn: %d pods created, %d deleted, %d API errors around the restart", churn.count(), churn.deletedCount(), churn.errorCount())
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
	cp := controlplane.Start(t, controlplane.Options{GpuschedViaProxy: true})
	ctx, cancel := context.WithTimeout(context.Background(), 85*time.Second)
	defer cancel()
	createDemoCluster(ctx, t, cp, faultNamespace)

	cp.Proxy.SetResponseDelay(4 * time.Second)
	slow := faultCreatePods(ctx, t, cp.Client, "slow", []int{1, 2, 1, 2})
	for _, name := range slow {
		faultWaitMessage(ctx, t, cp.Client, name, "binding "+faultNamespace+"/"+name, 30*time.Second)
	}
	cp.Proxy.SetResponseDelay(0)
	// A bind started just before this answers within the deadline; its
	// hold, if any, ends the hold time after that.
	holdsEnd := time.Now().Add(faultBindDeadline + faultInDoubtHold)
	faultCreatePods(ctx, t, cp.Client, "fast", []int{1, 2, 4, 1})
	if _, err := cluster.WaitForPods(ctx, cp.Client, faultNamespace, cluster.AllBound(8), 30*time.Second); err != nil {
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

func faultGpuPod(name string, gpus int) *cluster.PodBuilder {
	return cluster.NewPod(faultNamespace, name).SchedulerName(cluster.SchedulerName).Gpus(gpus)
}

// faultCreatePods creates <prefix>-<i> asking for sizes[i] GPUs and
// returns their names.
func faultCreatePods(ctx context.Context, t *testing.T, client kubernetes.Interface, prefix string, sizes []int) []string {
	t.Helper()
	var names []string
	for i, gpus := range sizes {
		name := fmt.Sprintf("%s-%d", prefix, i)
		if _, err := faultGpuPod(name, gpus).Create(ctx, client); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

// faultRunPinned creates 4-GPU pods pinned to a node and waits until they
// run.
func faultRunPinned(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, node string, names ...string) []corev1.Pod {
	t.Helper()
	for _, name := range names {
		if _, err := faultGpuPod(name, 4).NodeSelector(faultHostnameLabel, node).Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
	}
	var pods []corev1.Pod
	for _, name := range names {
		pod, err := cluster.WaitRunning(ctx, cp.Client, faultNamespace, name, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		pods = append(pods, *pod)
	}
	return pods
}

// faultDelete deletes a pod and waits until it is gone (the fake kubelet
// ends it).
func faultDelete(ctx context.Context, t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	pod, err := client.CoreV1().Pods(faultNamespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().Pods(faultNamespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	faultWaitGone(ctx, t, client, *pod)
}

func faultPodsByName(ctx context.Context, t *testing.T, client kubernetes.Interface, namespace string) map[string]corev1.Pod {
	t.Helper()
	list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]corev1.Pod{}
	for _, p := range list.Items {
		pods[p.Name] = p
	}
	return pods
}

// faultGpuIDs is the pod's gpu-ids, sorted.
func faultGpuIDs(t *testing.T, pod corev1.Pod) []int {
	t.Helper()
	ids, err := cluster.GpuIDs(&pod)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

// faultWaitGone waits until the pod (this UID) no longer exists.
func faultWaitGone(ctx context.Context, t *testing.T, client kubernetes.Interface, pod corev1.Pod) {
	t.Helper()
	gone := func(pods []corev1.Pod) bool {
		return !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.UID == pod.UID })
	}
	if _, err := cluster.WaitForPods(ctx, client, pod.Namespace, gone, 20*time.Second); err != nil {
		t.Fatalf("pod %s was never deleted: %v", pod.Name, err)
	}
}

// faultWaitMessage waits for a FailedScheduling event of the pod whose
// message contains want.
func faultWaitMessage(ctx context.Context, t *testing.T, client kubernetes.Interface, pod, want string, timeout time.Duration) {
	t.Helper()
	var messages []string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		messages, err = cluster.FailedSchedulingMessages(ctx, client, faultNamespace, pod)
		if err != nil {
			return false, nil // the API server may be slow or restarting
		}
		return slices.ContainsFunc(messages, func(m string) bool { return strings.Contains(m, want) }), nil
	})
	if err != nil {
		t.Fatalf("no FailedScheduling of %s containing %q: %v; messages %q", pod, want, err, messages)
	}
}

// faultWaitBoundAtLeast waits until at least n pods of the namespace are
// bound and returns how many are.
func faultWaitBoundAtLeast(ctx context.Context, t *testing.T, client kubernetes.Interface, n int, timeout time.Duration) int {
	t.Helper()
	bound := 0
	atLeast := func(pods []corev1.Pod) bool {
		bound = 0
		for i := range pods {
			if cluster.Bound(&pods[i]) {
				bound++
			}
		}
		return bound >= n
	}
	if _, err := cluster.WaitForPods(ctx, client, faultNamespace, atLeast, timeout); err != nil {
		t.Fatal(err)
	}
	return bound
}

// faultLedger reads every node and pod into a GpuLedger.
func faultLedger(ctx context.Context, client kubernetes.Interface) (*cluster.GpuLedger, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	pods, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return cluster.NewGpuLedger(nodes.Items, pods.Items), nil
}

// faultCheckLedger: no device is held twice and every bound pod's gpu-ids
// match its request.
func faultCheckLedger(ctx context.Context, t *testing.T, client kubernetes.Interface) *cluster.GpuLedger {
	t.Helper()
	ledger, err := faultLedger(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ledger.Problems {
		t.Error(p)
	}
	return ledger
}

// faultWaitSettled waits until no pending pod fits on any node by the API
// server's own account: everything that can bind has bound.
func faultWaitSettled(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, timeout time.Duration) *cluster.GpuLedger {
	t.Helper()
	var ledger *cluster.GpuLedger
	var fitting []string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		l, err := faultLedger(ctx, cp.Client)
		if err != nil {
			return false, nil
		}
		ledger, fitting = l, l.Fitting()
		return len(fitting) == 0, nil
	})
	if err != nil {
		t.Fatalf("pods still pending with room for them after %v: %v\n%s\ngpusched: %s", timeout, err,
			strings.Join(fitting, "\n"), faultPendingReasons(ctx, cp.Client, ledger))
	}
	return ledger
}

// faultPendingReasons is each pending pod's last FailedScheduling message.
func faultPendingReasons(ctx context.Context, client kubernetes.Interface, ledger *cluster.GpuLedger) string {
	if ledger == nil {
		return "(no ledger)"
	}
	// The test's context may have run out: this explains its failure.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var b strings.Builder
	for _, p := range ledger.Pending {
		messages, _ := cluster.FailedSchedulingMessages(ctx, client, p.Namespace, p.Name)
		last := ""
		if len(messages) > 0 {
			last = messages[len(messages)-1]
		}
		fmt.Fprintf(&b, "  %s/%s (%d GPUs): %q\n", p.Namespace, p.Name, cluster.PodGpus(p), last)
	}
	return b.String()
}

// faultCheckModel waits until gpusched's model (/v1/nodes) holds exactly
// the pods the API server shows on nodes, with their gpu-ids. Its watch
// lags a little, hence the wait.
func faultCheckModel(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, timeout time.Duration) {
	t.Helper()
	var diffs []string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		model, err := cluster.GpuschedModel(ctx, cp.GpuschedURL)
		if err != nil {
			diffs = []string{err.Error()}
			return false, nil
		}
		pods, err := cp.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			diffs = []string{err.Error()}
			return false, nil
		}
		diffs = cluster.ModelDiff(model, pods.Items)
		return len(diffs) == 0, nil
	})
	if err != nil {
		t.Errorf("gpusched's model differs from the API server after %v:\n%s", timeout, strings.Join(diffs, "\n"))
	}
}

// faultLandedInDoubt returns the pods that gpusched answered "may still
// land" for and that are bound on the node of that binding: the binding
// landed after gpusched gave up waiting for its answer.
func faultLandedInDoubt(ctx context.Context, t *testing.T, client kubernetes.Interface, names []string) []string {
	t.Helper()
	pods := faultPodsByName(ctx, t, client, faultNamespace)
	var landed []string
	for _, name := range names {
		messages, err := cluster.FailedSchedulingMessages(ctx, client, faultNamespace, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range messages {
			if !strings.Contains(m, faultMayStillLand) {
				continue
			}
			pod := pods[name]
			if strings.Contains(m, " to "+pod.Spec.NodeName+" failed") {
				landed = append(landed, name+" on "+pod.Spec.NodeName)
				break
			}
		}
	}
	return landed
}

// faultCheckNoExtenderTimeout: kube-scheduler never gave up waiting for
// gpusched. Its HTTP client's errors name the extender URL ("Post
// \"http://127.0.0.1:port/bind\": context deadline exceeded
// (Client.Timeout exceeded while awaiting headers)").
func faultCheckNoExtenderTimeout(t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	lines, err := cluster.GrepLog(filepath.Join(cp.Dir, "kube-scheduler.log"), cp.GpuschedURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range lines {
		// Not "timeout" alone: the extender's configuration line names
		// HTTPTimeout.
		for _, timeout := range []string{"Client.Timeout", "deadline exceeded", "i/o timeout"} {
			if strings.Contains(line, timeout) {
				t.Errorf("kube-scheduler timed out on gpusched: %.600s", line)
				break
			}
		}
	}
}

// faultCheckHoldsSettledByWatch: every binding gpusched answered "may
// still land" for did land, so its pod watch must have settled it; had it
// not, the hold would run out (a warning) and the devices of a running pod
// would be released. Only the end of the hold can show that, so this polls
// until then, failing at the first sign.
func faultCheckHoldsSettledByWatch(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, holdsEnd time.Time) {
	t.Helper()
	log := filepath.Join(cp.Dir, "gpusched.log")
	// Holds are released on gpusched's 1 s tick.
	until := time.Until(holdsEnd) + 2*time.Second
	var expired []string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, until, true, func(context.Context) (bool, error) {
		var err error
		expired, err = cluster.GrepLog(log, faultHoldExpired)
		return len(expired) > 0, err
	})
	if len(expired) > 0 {
		t.Errorf("gpusched released in-doubt binds that had landed (its watch never settled them): %q", expired)
	} else if !wait.Interrupted(err) {
		t.Fatal(err)
	}
	faultCheckModel(ctx, t, cp, 5*time.Second)
}

// faultCheckAnswerDurations: gpusched's duration histogram of each verb
// has observations and none above the bucket holding kube-scheduler's 5 s
// httpTimeout.
func faultCheckAnswerDurations(t *testing.T, cp *controlplane.ControlPlane, verbs ...string) {
	t.Helper()
	metrics, err := cp.GpuschedMetrics()
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range verbs {
		buckets := cluster.HistogramBuckets(metrics, "gpusched_extender_request_duration_seconds", `verb="`+verb+`"`)
		within, all := buckets[fmt.Sprint(faultHTTPTimeout.Seconds())], buckets["+Inf"]
		if all == 0 || within != all {
			t.Errorf("gpusched %s durations: %v of %v within %v (buckets %v)", verb, within, all, faultHTTPTimeout, buckets)
		}
		t.Logf("%s: %v answers, %v within 1 s, %v within %v", verb, all, buckets["1"], within, faultHTTPTimeout)
	}
}

// faultChurn creates a 1-GPU pod every 150 ms and deletes the one created
// three steps before, through the admin client, until stopped; API errors
// (the restart) are counted and the step is retried on the next tick.
type faultChurn struct {
	mu                       sync.Mutex
	created, deleted, errors int
	done                     chan struct{}
	finished                 sync.WaitGroup
}

func faultStartChurn(ctx context.Context, client kubernetes.Interface) *faultChurn {
	c := &faultChurn{done: make(chan struct{})}
	c.finished.Add(1)
	go func() {
		defer c.finished.Done()
		ticker := time.NewTicker(150 * time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-c.done:
				return
			case <-ctx.Done():
				return
			case <-ticker.C:
				c.step(ctx, client)
			}
		}
	}()
	return c
}

func (c *faultChurn) step(ctx context.Context, client kubernetes.Interface) {
	c.mu.Lock()
	created, deleted := c.created, c.deleted
	c.mu.Unlock()
	var err error
	if created-deleted > 3 {
		err = client.CoreV1().Pods(faultNamespace).Delete(ctx, fmt.Sprintf("churn-%d", deleted), metav1.DeleteOptions{})
		if err == nil {
			deleted++
		}
	} else {
		_, err = faultGpuPod(fmt.Sprintf("churn-%d", created), 1).Create(ctx, client)
		if err == nil {
			created++
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.created, c.deleted = created, deleted
	if err != nil {
		c.errors++
	}
}

func (c *faultChurn) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.created
}

func (c *faultChurn) deletedCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deleted
}

func (c *faultChurn) errorCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errors
}

// waitCreated waits until the churn has created n pods.
func (c *faultChurn) waitCreated(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return c.count() >= n, nil
	})
	if err != nil {
		t.Fatalf("churn created %d pods, want %d: %v", c.count(), n, err)
	}
}

func (c *faultChurn) stop() {
	close(c.done)
	c.finished.Wait()
}
