package suite_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
	"gpusched.io/e2e/suite/promtext"
)

// Checks of the fault tests (faults_test.go): the devices pods hold and
// whether everything that can bind has bound, gpusched's model,
// kube-scheduler's and gpusched's logs, gpusched's answer durations.

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
	pods := cluster.PodsByName(ctx, t, client, cluster.Namespace)
	var landed []string
	for _, name := range names {
		messages, err := cluster.FailedSchedulingMessages(ctx, client, cluster.Namespace, name)
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
		buckets := promtext.Parse(metrics).Histogram("gpusched_extender_request_duration_seconds", map[string]string{"verb": verb}).Buckets
		within, all := buckets[faultHTTPTimeout.Seconds()], buckets[math.Inf(1)]
		if all == 0 || within != all {
			t.Errorf("gpusched %s durations: %v of %v within %v (buckets %v)", verb, within, all, faultHTTPTimeout, buckets)
		}
		t.Logf("%s: %v answers, %v within 1 s, %v within %v", verb, all, buckets[1], within, faultHTTPTimeout)
	}
}
