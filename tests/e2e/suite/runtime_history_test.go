package suite_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

const (
	historyNs        = "history"
	historyConfigMap = "gpusched-runtime-history"
)

// TestRuntimeHistorySurvivesRestart (issue H §3, the history arm): a
// workload with no expected runtime and no deadline finishes; gpusched
// keeps how long it ran in its ConfigMap, and after a restart it forecasts
// the start of a workload waiting behind another of the same queue and
// shape from that history, where it would otherwise say "unknown".
func TestRuntimeHistorySurvivesRestart(t *testing.T) {
	cp, ctx, cancel := startOneQueue(t, "history", historyNs)
	defer cancel()
	historyPod(ctx, t, cp, "first", 3*time.Second)
	waitHistoryPhase(ctx, t, cp, "first", corev1.PodSucceeded)

	// A graceful stop saves what was learnt since the last save.
	if err := cp.StopGpusched(); err != nil {
		t.Fatalf("gpusched did not stop cleanly: %v", err)
	}
	cm, err := cp.Client.CoreV1().ConfigMaps(controlplane.DeployNamespace).Get(ctx, historyConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("no runtime history ConfigMap after a finished workload: %v", err)
	}
	saved := cm.Data["runtimes.json"]
	t.Logf("%s/%s runtimes.json: %s", controlplane.DeployNamespace, historyConfigMap, saved)
	if !strings.Contains(saved, `"clusterQueue":"history"`) || !strings.Contains(saved, `"shape":"1x nvidia.com/gpu=2"`) {
		t.Fatalf("runtimes.json %s: want the history queue's 2-GPU run", saved)
	}
	cp.StartGpusched()

	historyPod(ctx, t, cp, "holder", 60*time.Second)
	waitHistoryPhase(ctx, t, cp, "holder", corev1.PodRunning)
	historyPod(ctx, t, cp, "after", 5*time.Second)
	var last string
	for ctx.Err() == nil {
		out, err := cp.Kubectl(ctx, "get", "--raw", explainPath(historyNs, "after"))
		var e explanation
		if err == nil && json.Unmarshal(out, &e) == nil && e.Start != nil && e.Start.Expected != "" {
			t.Logf("explain after:\n%s", out)
			return
		}
		last = string(out)
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("explain never forecast a start from the history; last: %s", last)
}

// historyPod queues a 2-GPU pod that runs for `run` once bound, with
// neither gpusched.io/expected-runtime nor activeDeadlineSeconds.
func historyPod(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string, run time.Duration) {
	t.Helper()
	_, err := cluster.NewPod(historyNs, name).SchedulerName(cluster.SchedulerName).Gpus(2).
		Label(queueLabel, visLocalQueue).RunFor(run).Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
}

func waitHistoryPhase(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string, phase corev1.PodPhase) {
	t.Helper()
	for ctx.Err() == nil {
		p, err := cp.Client.CoreV1().Pods(historyNs).Get(ctx, name, metav1.GetOptions{})
		if err == nil && p.Status.Phase == phase {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("pod %s/%s never reached %s", historyNs, name, phase)
}
