package suite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// The forecast's two workloads: `running` holds the ClusterQueue's two
// GPUs for its expected runtime; `waiting`, a gang of two one-GPU pods,
// can start only when it ends.
const (
	forecastNs        = "forecast"
	forecastRuntime   = 20 * time.Second
	forecastTolerance = 5 * time.Second
)

// TestForecastStartComesTrue (issue H §6): a running workload with
// gpusched.io/expected-runtime finishes on time (the fake kubelet marks it
// Succeeded then), and the waiting gang starts within 5 s of the start
// that explain forecast while it waited.
func TestForecastStartComesTrue(t *testing.T) {
	cp, ctx, cancel := startOneQueue(t, "forecast", forecastNs)
	defer cancel()
	_, err := cluster.NewPod(forecastNs, "running").SchedulerName(cluster.SchedulerName).Gpus(2).
		Label(queueLabel, visLocalQueue).
		Annotation("gpusched.io/expected-runtime", forecastRuntime.String()).
		RunFor(forecastRuntime).Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
	waitPodsBound(ctx, t, cp, "running")
	for i := 0; i < 2; i++ {
		_, err := cluster.NewPod(forecastNs, fmt.Sprintf("waiting-%d", i)).SchedulerName(cluster.SchedulerName).Gpus(1).
			Label(queueLabel, visLocalQueue).
			Label("kueue.x-k8s.io/pod-group-name", "waiting").
			Annotation("kueue.x-k8s.io/pod-group-total-count", "2").
			Create(ctx, cp.Client)
		if err != nil {
			t.Fatal(err)
		}
	}
	expected := waitForExpectedStart(ctx, t, cp)
	if out, err := cp.Kubectl(ctx, "get", "localqueues.visibility.gpusched.io", visLocalQueue, "-n", forecastNs); err == nil {
		t.Logf("kubectl get localqueues.visibility.gpusched.io %s -n %s:\n%s", visLocalQueue, forecastNs, out)
	}
	started := waitPodsBound(ctx, t, cp, "waiting-0", "waiting-1")
	off := started.Sub(expected)
	t.Logf("forecast start %s, started %s (%+.1f s)", expected.Format(time.RFC3339), started.Format(time.RFC3339Nano), off.Seconds())
	if off > forecastTolerance || off < -forecastTolerance {
		t.Errorf("the gang started %+.1f s from its forecast start, want within %s", off.Seconds(), forecastTolerance)
	}
}

// waitForExpectedStart: explain's expected start for the waiting gang,
// once a forecast has made one.
func waitForExpectedStart(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) time.Time {
	t.Helper()
	var last string
	for ctx.Err() == nil {
		out, err := cp.Kubectl(ctx, "get", "--raw", explainPath(forecastNs, "waiting"))
		var e explanation
		if err == nil && json.Unmarshal(out, &e) == nil && e.Start != nil && e.Start.Expected != "" {
			t.Logf("explain waiting:\n%s", out)
			at, perr := time.Parse(time.RFC3339, e.Start.Expected)
			if perr != nil {
				t.Fatalf("explain waiting: start %q: %v", e.Start.Expected, perr)
			}
			return at
		}
		last = fmt.Sprintf("%s %v", out, err)
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("explain waiting never gave an expected start; last: %s", last)
	return time.Time{}
}

// waitPodsBound polls until every named pod of forecastNs has a node and
// returns when that was seen.
func waitPodsBound(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, names ...string) time.Time {
	t.Helper()
	for ctx.Err() == nil {
		bound := 0
		for _, name := range names {
			p, err := cp.Client.CoreV1().Pods(forecastNs).Get(ctx, name, metav1.GetOptions{})
			if err == nil && p.Spec.NodeName != "" && p.Status.Phase != corev1.PodFailed {
				bound++
			}
		}
		if bound == len(names) {
			return time.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("pods %v never bound", names)
	return time.Time{}
}

// startOneQueue: the control plane with the webhook and the visibility API,
// the demo cluster, and one 2-GPU ClusterQueue `queue` whose LocalQueue
// lives in namespace `ns`; the context ends after 120 s.
func startOneQueue(t *testing.T, queue, ns string) (*controlplane.ControlPlane, context.Context, context.CancelFunc) {
	t.Helper()
	policy := writePolicy(t, cluster.KueuePolicy{Queues: []cluster.ClusterQueue{{
		Name: queue, GPUs: 2, CPUs: 64,
		LocalQueues: []cluster.LocalQueue{{Namespace: ns, Name: visLocalQueue}},
	}}})
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Visibility: true, Policy: policy})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	cluster.SetUpDemoCluster(ctx, t, cp)
	if err := controlplane.EnsureNamespace(ctx, cp.Client, ns); err != nil {
		cancel()
		t.Fatal(err)
	}
	return cp, ctx, cancel
}
