package suite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// TestFixtureLifecycle exercises what other tests rely on: the delay
// proxy, restarts of the apiserver and of gpusched, the fake kubelet's run
// time and deletions, scheduling events and both /metrics endpoints.
func TestFixtureLifecycle(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{GpuschedViaProxy: true})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cluster.CreateDemoCluster(ctx, t, cp)
	runGpuPod := func(name string) *corev1.Pod {
		t.Helper()
		if _, err := cluster.NewPod("e2e", name).SchedulerName(cluster.SchedulerName).Gpus(1).Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
		pod, err := cluster.WaitRunning(ctx, cp.Client, "e2e", name, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cluster.GpuIDs(pod); err != nil {
			t.Fatal(err)
		}
		return pod
	}

	runGpuPod("first")
	cp.Proxy.SetResponseDelay(300 * time.Millisecond)
	runGpuPod("slow-apiserver")
	cp.Proxy.SetResponseDelay(0)

	cp.RestartAPIServer()
	runGpuPod("after-apiserver-restart")

	cp.KillGpusched()
	cp.StartGpusched()
	runGpuPod("after-gpusched-kill")
	if err := cp.StopGpusched(); err != nil {
		t.Errorf("gpusched after SIGTERM: %v, want exit status 0", err)
	}
	cp.StartGpusched()
	runGpuPod("after-gpusched-stop")

	checkFakeKubelet(ctx, t, cp)
	checkFailedScheduling(ctx, t, cp)
	checkMetrics(t, cp)
}

// checkFakeKubelet: a pod with a run time succeeds, a deleted pod goes.
func checkFakeKubelet(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	const runFor = time.Second
	created := time.Now()
	_, err := cluster.NewPod("e2e", "short").SchedulerName(cluster.SchedulerName).Gpus(1).RunFor(runFor).Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
	succeeded := func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded }
	if _, err := cluster.WaitForPod(ctx, cp.Client, "e2e", "short", succeeded, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(created); took < runFor {
		t.Errorf("pod with run-for %v succeeded %v after its creation", runFor, took)
	}
	if err := cp.Client.CoreV1().Pods("e2e").Delete(ctx, "first", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gone := func(pods []corev1.Pod) bool {
		for _, p := range pods {
			if p.Name == "first" {
				return false
			}
		}
		return true
	}
	if _, err := cluster.WaitForPods(ctx, cp.Client, "e2e", gone, 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

// checkFailedScheduling: a pod no node can hold gets FailedScheduling
// events.
func checkFailedScheduling(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	_, err := cluster.NewPod("e2e", "too-big").SchedulerName(cluster.SchedulerName).Gpus(64).Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
	var messages []string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		messages, err = cluster.FailedSchedulingMessages(ctx, cp.Client, "e2e", "too-big")
		return len(messages) > 0, err
	})
	if err != nil {
		t.Fatalf("FailedScheduling events of e2e/too-big: %v", err)
	}
	t.Logf("FailedScheduling: %q", messages)
}

func checkMetrics(t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	metrics, err := cp.SchedulerMetrics()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(metrics, "scheduler_schedule_attempts_total") {
		t.Errorf("kube-scheduler /metrics lacks scheduler_schedule_attempts_total")
	}
	if _, err := cp.GpuschedMetrics(); err != nil {
		t.Error(err)
	}
	if pids := cp.Pids(); len(pids) != 4 {
		t.Errorf("Pids() = %v, want 4 components", pids)
	}
}
