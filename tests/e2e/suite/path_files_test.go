package suite_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// TestWatchEventToPatchUnderCallgrind is bench/path_files.sh's second
// half, skipped unless E2E_PATH_FILES=1 and GPUSCHED_BIN runs gpusched
// under callgrind with instrumentation off at start: it switches
// instrumentation on, creates one queued 2-GPU pod carrying gpusched's gate
// (no webhook: valgrind is too slow to answer the API server's admission
// calls in time), waits for the admission PATCH to lift the gate, and
// dumps. No kube-scheduler runs, so nothing but the pod's event, the pass
// and the write is recorded. A first pod warms the loop up.
func TestWatchEventToPatchUnderCallgrind(t *testing.T) {
	if os.Getenv("E2E_PATH_FILES") != "1" {
		t.Skip("bench/path_files.sh runs this under callgrind")
	}
	policy := queuePolicy(t, map[string]int{"team-a": 64}, nil)
	cp := controlplane.Start(t, controlplane.Options{Policy: policy, ReadyTimeout: 5 * time.Minute,
		Run: &controlplane.Components{Gpusched: true}})
	ctx := context.Background()
	nodes := cluster.SetUpDemoCluster(ctx, t, cp)
	cluster.WaitGpuschedNodes(ctx, t, cp, len(nodes), 5*time.Minute)
	admitGatedPod(ctx, t, cp, "warm-up")
	time.Sleep(3 * time.Second) // the warm-up's own events settle
	callgrindControl(t, "-i", "on")
	admitGatedPod(ctx, t, cp, "measured")
	time.Sleep(2 * time.Second) // the PATCH's own watch event comes back
	callgrindControl(t, "-i", "off")
	callgrindControl(t, "-d")
}

func admitGatedPod(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string) {
	pod := cluster.GpuPod(name, 2).Label("kueue.x-k8s.io/queue-name", "team-a").
		SchedulingGate("gpusched.io/admission")
	if _, err := pod.Create(ctx, cp.Client); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		p, err := cp.Client.CoreV1().Pods(cluster.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil && len(p.Spec.SchedulingGates) == 0 {
			return
		}
	}
	t.Fatalf("pod %s was never ungated", name)
}

func callgrindControl(t *testing.T, args ...string) {
	if out, err := exec.Command("callgrind_control", args...).CombinedOutput(); err != nil {
		t.Fatalf("callgrind_control %v: %v\n%s", args, err, out)
	}
}
