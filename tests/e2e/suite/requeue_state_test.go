package suite_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

const requeueConfigMap = "gpusched-requeue-state"

// TestRequeueCountSurvivesAKilledGpusched: Kueue keeps waitForPodsReady's
// requeue count in its Workload, so a restart does not give a workload
// back the requeues backoffLimitCount took from it; gpusched keeps it in
// the ConfigMap gpusched-requeue-state. With backoffLimitCount 1, a gang
// that cannot bind is rolled back once (PodsReadyTimeout) and its count
// saved; gpusched is killed (SIGKILL), the gang's pods are created again
// as its job controller would, and the restarted gpusched's next timeout is
// the second: it deactivates the gang (RequeuingLimitExceeded). Had the
// restart lost the count, that timeout would have requeued it again.
func TestRequeueCountSurvivesAKilledGpusched(t *testing.T) {
	const timeout = 8 * time.Second
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: podsReadyPolicy(t, timeout)})
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	nodes := cluster.SetUpDemoCluster(ctx, t, cp)
	placeBlockers(ctx, t, cp, nodes)

	createStuckGang(ctx, t, cp)
	waitGangGone(ctx, t, cp, "stuck", timeout+60*time.Second)
	waitForReason(ctx, t, cp, "Pod", "PodsReadyTimeout", []string{"stuck-0", "stuck-1"})
	saved := waitRequeueRecord(ctx, t, cp, `"count":1`)
	t.Logf("%s after the first timeout: %s", requeueConfigMap, saved)

	cp.KillGpusched()
	createStuckGang(ctx, t, cp)
	cp.StartGpusched()

	// Its pods are evicted again, so nothing of it is left to keep: the
	// Events say what the second timeout did.
	waitForReason(ctx, t, cp, "Pod", "RequeuingLimitExceeded", []string{"stuck-0", "stuck-1"})
}

// podsReadyPolicy: team-a's 32 GPUs, and Kueue's Configuration with
// waitForPodsReady's `timeout`, backoffs of 1 s and backoffLimitCount 1.
func podsReadyPolicy(t *testing.T, timeout time.Duration) string {
	t.Helper()
	path := writePolicy(t, cluster.KueuePolicy{Queues: cluster.ResearchQueues(cluster.Namespace, map[string]int{"team-a": 32})})
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	config := "---\napiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n" +
		"waitForPodsReady:\n  timeout: " + timeout.String() + "\n" +
		"  requeuingStrategy:\n    timestamp: Eviction\n    backoffBaseSeconds: 1\n" +
		"    backoffMaxSeconds: 1\n    backoffLimitCount: 1\n"
	if err := os.WriteFile(path, append(text, config...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitRequeueRecord waits for the requeue state ConfigMap to hold `want`
// and returns what it holds.
func waitRequeueRecord(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, want string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) && ctx.Err() == nil {
		cm, err := cp.Client.CoreV1().ConfigMaps(controlplane.DeployNamespace).Get(ctx, requeueConfigMap, metav1.GetOptions{})
		if err == nil {
			last = cm.Data["requeue.json"]
			if strings.Contains(last, want) {
				return last
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s/%s never held %s; last: %q", controlplane.DeployNamespace, requeueConfigMap, want, last)
	return ""
}
