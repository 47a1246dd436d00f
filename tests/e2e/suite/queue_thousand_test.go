package suite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// The queueing core at volume through the real kube-scheduler: many more
// queued pods than GPUs, finishing and freeing capacity as they go.

const (
	thousandSingles   = 1000
	thousandGangs     = 50
	thousandGangSize  = 4
	thousandSingleGPU = 20 // ClusterQueue singles
	thousandGangGPU   = 12 // ClusterQueue gangs: three gangs at a time
	// thousandAdmissionTimeout is the policy's gang.admissionTimeout: a
	// gang partly bound for longer is rolled back by the engine.
	thousandAdmissionTimeout = 60 * time.Second
)

// thousandPolicy: the demo cluster's 32 H100 GPUs split between two
// ClusterQueues of no cohort (so neither borrows and each quota is a hard
// bound), both StrictFIFO, so that the admission order is exactly the
// queue order: by priority (all equal here), creation second, then name.
func thousandPolicy(t *testing.T) string {
	t.Helper()
	policy := cluster.KueuePolicy{SchedulerConfig: &cluster.SchedulerConfig{Name: "default",
		Gang: map[string]string{"admissionTimeout": thousandAdmissionTimeout.String()}}}
	for _, q := range []struct {
		name string
		gpus int
	}{{"singles", thousandSingleGPU}, {"gangs", thousandGangGPU}} {
		policy.Queues = append(policy.Queues, cluster.ClusterQueue{Name: q.name, GPUs: q.gpus, CPUs: 64, StrictFIFO: true,
			LocalQueues: []cluster.LocalQueue{{Namespace: cluster.Namespace, Name: q.name}}})
	}
	return writePolicy(t, policy)
}

// TestThousandQueuedPodsAndFiftyGangsRunInQueueOrder: 1,000 single-GPU
// pods and 50 gangs of 4 x 1 GPU, all queued at once behind 32 GPUs, each
// pod running 2 s. Checked every 250 ms while they flow (admissionMonitor):
// admissions follow each queue's order, the queues' quotas hold, no member
// binds before its whole gang is admitted, no gang stays partly bound past
// the admission timeout, no GPU is given twice. No deadlock: every pod
// runs and succeeds.
func TestThousandQueuedPodsAndFiftyGangsRunInQueueOrder(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: thousandPolicy(t)})
	ctx, cancel := context.WithTimeout(context.Background(), 480*time.Second)
	defer cancel()
	nodes := cluster.SetUpDemoCluster(ctx, t, cp)
	monitor := startAdmissionMonitor(ctx, cp.Client, nodes,
		map[string]int64{"singles": thousandSingleGPU, "gangs": thousandGangGPU},
		thousandAdmissionTimeout+15*time.Second, 5*time.Second, nil)
	defer monitor.stop()

	began := time.Now()
	thousandCreate(ctx, t, cp)
	t.Logf("%d pods created in %v", thousandSingles+thousandGangs*thousandGangSize, time.Since(began).Round(time.Millisecond))
	thousandWaitAllSucceeded(ctx, t, monitor, began, 400*time.Second)
	for _, p := range monitor.stop() {
		t.Error(p)
	}
	t.Logf("all succeeded %v after the first was created; %d checks", time.Since(began).Round(time.Second), monitor.checkCount())
}

// thousandCreate creates the pods from parallel workers, gangs spread
// among the singles (one gang after every 20 singles).
func thousandCreate(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	total := thousandSingles + thousandGangs*thousandGangSize
	perGang := thousandSingles / thousandGangs
	err := cluster.Parallel(total, 8, func(i int) error {
		round, k := i/(perGang+thousandGangSize), i%(perGang+thousandGangSize)
		if k < perGang {
			_, err := cluster.GpuPod(fmt.Sprintf("single-%04d", round*perGang+k), 1).
				Label("kueue.x-k8s.io/queue-name", "singles").RunFor(2*time.Second).Create(ctx, cp.Client)
			return err
		}
		group := fmt.Sprintf("gang-%02d", round)
		_, err := cluster.GpuPod(fmt.Sprintf("%s-%d", group, k-perGang), 1).
			Label("kueue.x-k8s.io/queue-name", "gangs").
			Label("kueue.x-k8s.io/pod-group-name", group).
			Annotation("kueue.x-k8s.io/pod-group-total-count", fmt.Sprint(thousandGangSize)).
			RunFor(2*time.Second).Create(ctx, cp.Client)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// thousandWaitAllSucceeded waits until every pod succeeded, logging the
// progress every 20 s; it fails when nothing progresses for a minute (a
// deadlock) or the timeout runs out.
func thousandWaitAllSucceeded(ctx context.Context, t *testing.T, monitor *admissionMonitor, began time.Time, timeout time.Duration) {
	t.Helper()
	total := thousandSingles + thousandGangs*thousandGangSize
	deadline := time.Now().Add(timeout)
	lastDone, lastProgress, lastLog := -1, time.Now(), time.Now()
	for {
		pods := monitor.listPods()
		counts := map[corev1.PodPhase]int{}
		bound := 0
		for i := range pods {
			counts[pods[i].Status.Phase]++
			if pods[i].Spec.NodeName != "" {
				bound++
			}
		}
		done := counts[corev1.PodSucceeded]
		if done == total {
			return
		}
		if done != lastDone {
			lastDone, lastProgress = done, time.Now()
		}
		if time.Since(lastLog) > 20*time.Second {
			t.Logf("%v: %d of %d succeeded, %d running, %d bound", time.Since(began).Round(time.Second),
				done, total, counts[corev1.PodRunning], bound)
			lastLog = time.Now()
		}
		if time.Since(lastProgress) > time.Minute {
			t.Fatalf("no pod succeeded for a minute: %d of %d succeeded, %d running, %d bound (deadlock?)",
				done, total, counts[corev1.PodRunning], bound)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("after %v: %d of %d succeeded, %d running, %d bound", timeout, done, total,
				counts[corev1.PodRunning], bound)
		}
		time.Sleep(time.Second)
	}
}
