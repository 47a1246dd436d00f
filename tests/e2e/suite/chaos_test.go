package suite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

const (
	// chaosCompaction is kube-apiserver's --etcd-compaction-interval: etcd's
	// history goes after a few seconds, so a watch resumed after an outage
	// gets 410 Gone and its client lists again.
	chaosCompaction = 5 * time.Second
	// chaosDeadline: every pod has succeeded this long after the first was
	// created.
	chaosDeadline = 120 * time.Second
	// chaosExtraNodes DGX H100 beside the demo's twelve nodes: the quota,
	// not the cluster, holds pods back, and a restarted gpusched lists its
	// pods well before its nodes (issue 21 needs that to show).
	chaosExtraNodes = 400
)

// TestChaosQueueSurvivesKills (issue 21): 224 pods (160 single-GPU pods
// and 16 Kueue pod groups of 4 x 2 GPUs, 288 GPUs in all) flow through one
// ClusterQueue of 64 GPUs on 412 nodes, each running 2-4 s under the fake
// kubelet, while components are SIGKILLed and started again at six points:
// gpusched; kube-apiserver; etcd; kube-scheduler and then gpusched, so that
// gpusched dies with admitted pods waiting for their binds. kube-apiserver
// compacts etcd every 5 s, so watches resumed after an outage see 410 Gone
// and list again. Order, rhythm and faults come from CHAOS_SEED (default 1;
// `make chaos` runs many seeds). Checked every 250 ms (chaosMonitor): no
// pod deleted or evicted, the queue never over its quota, no GPU given
// twice, no gang partly bound for long; and in the end every pod has
// succeeded.
func TestChaosQueueSurvivesKills(t *testing.T) {
	seed := cluster.ChaosSeed(t)
	t.Logf("CHAOS_SEED=%d", seed)
	plan := cluster.NewChaosPlan(seed)
	t.Logf("plan: %s", plan)
	policy := queuePolicy(t, map[string]int{cluster.ChaosQueue: cluster.ChaosQuota}, nil)
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy,
		APIServerArgs: []string{"--etcd-compaction-interval=" + chaosCompaction.String()}})
	ctx, cancel := context.WithTimeout(context.Background(), 170*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	createH100Nodes(ctx, t, cp, "chaos-h100", chaosExtraNodes)
	_, nodes := cluster.MustListPodsAndNodes(ctx, t, cp.Client)
	watch, err := startPodLossWatch(cp.Client, cluster.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.stop()
	monitor := startChaosMonitor(ctx, cp.Client, watch, nodes, cluster.ChaosQueue, cluster.ChaosQuota)
	defer monitor.stop()

	began := time.Now()
	creator := cluster.StartChaosCreator(ctx, cp.Client, plan)
	chaosRunFaults(t, cp, monitor, plan, began)
	creator.Wait(t, 60*time.Second)
	t.Logf("%d pods created in %v; %d while gpusched's webhook was down (ungated); %d creations retried",
		creator.Created.Load(), time.Since(began).Round(time.Millisecond), creator.Ungated.Load(), creator.Retries.Load())
	chaosWaitAllSucceeded(t, monitor, len(plan.Pods), began)
	violations := monitor.stop()
	for _, v := range violations {
		t.Errorf("violation: %s", v)
	}
	faultCheckLedger(ctx, t, cp.Client)
	chaosReportLog(t, cp)
	t.Logf("chaos seed %d: %d violations; %s; %v from the first creation", seed, len(violations),
		monitor.summary(), time.Since(began).Round(time.Second))
}

// chaosRunFaults injects the plan's faults in order, each at its time (or
// once the previous one's component is back), logging what was running.
func chaosRunFaults(t *testing.T, cp *controlplane.ControlPlane, monitor *chaosMonitor, plan *cluster.ChaosPlan, began time.Time) {
	t.Helper()
	for _, f := range plan.Faults {
		time.Sleep(time.Until(began.Add(f.At)))
		pods := monitor.latest()
		at := time.Since(began)
		took := chaosInject(t, cp, monitor, f)
		t.Logf("%v: %s killed with %d pods created, %d bound, %d succeeded; down %v, ready again after %v",
			at.Round(100*time.Millisecond), f.Kind, len(pods), countBound(pods), countPhase(pods, corev1.PodSucceeded),
			f.Down.Round(10*time.Millisecond), took.Round(10*time.Millisecond))
	}
}

// chaosInject kills the fault's component, waits f.Down, starts it again
// and waits until it (and, after etcd, kube-apiserver) is ready. It
// returns how long the outage lasted.
func chaosInject(t *testing.T, cp *controlplane.ControlPlane, monitor *chaosMonitor, f cluster.ChaosFault) time.Duration {
	t.Helper()
	began := time.Now()
	monitor.faultBegin(f.Kind)
	defer monitor.faultEnd()
	switch f.Kind {
	case controlplane.Gpusched:
		cp.KillGpusched()
		time.Sleep(f.Down)
		cp.StartGpusched()
	case controlplane.KubeAPIServer:
		cp.KillAPIServer()
		time.Sleep(f.Down)
		cp.StartAPIServer()
	case cluster.ChaosBindOutage:
		// Pods gpusched admits while kube-scheduler is down stay unbound;
		// kube-scheduler comes back first, its binds failing while
		// gpusched is down, as when deploy/'s pod is replaced.
		cp.StopScheduler()
		time.Sleep(f.Down)
		t.Logf("gpusched killed with %d admitted pods waiting for their bind", chaosAdmittedUnbound(t, cp))
		cp.KillGpusched()
		cp.StartScheduler()
		time.Sleep(time.Second)
		cp.StartGpusched()
	case controlplane.Etcd:
		// kube-apiserver stays up without etcd (its requests fail) and
		// reconnects; it is ready again once its etcd check passes.
		cp.KillEtcd()
		time.Sleep(f.Down)
		cp.StartEtcd()
		cp.WaitAPIServerReady()
	default:
		t.Fatalf("unknown fault %q", f.Kind)
	}
	if f.Kind == controlplane.KubeAPIServer || f.Kind == controlplane.Etcd {
		// Its informer would wait up to 30 s before watching again.
		cp.RestartKubelet()
	}
	return time.Since(began)
}

// chaosAdmittedUnbound counts the pods gpusched admitted that are not
// bound yet (a fresh List).
func chaosAdmittedUnbound(t *testing.T, cp *controlplane.ControlPlane) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n := 0
	for _, p := range queuedPods(ctx, t, cp) {
		if !cluster.Bound(&p) && p.Annotations["gpusched.io/assigned-node"] != "" {
			n++
		}
	}
	return n
}

func countPhase(pods []corev1.Pod, phase corev1.PodPhase) int {
	n := 0
	for i := range pods {
		if pods[i].Status.Phase == phase {
			n++
		}
	}
	return n
}

// chaosWaitAllSucceeded waits until all total pods have succeeded, up to
// chaosDeadline after began, logging progress every 10 s. It returns early
// once the monitor saw a violation (the run has failed already).
func chaosWaitAllSucceeded(t *testing.T, monitor *chaosMonitor, total int, began time.Time) {
	t.Helper()
	lastLog := time.Now()
	for {
		pods := monitor.latest()
		done := countPhase(pods, corev1.PodSucceeded)
		if done == total {
			t.Logf("all %d pods succeeded %v after the first was created", total, time.Since(began).Round(100*time.Millisecond))
			return
		}
		if len(monitor.violations()) > 0 {
			t.Logf("stopping early: a violation was seen (%d of %d pods succeeded)", done, total)
			return
		}
		if time.Since(began) > chaosDeadline {
			t.Errorf("(e) %d of %d pods succeeded %v after the first was created; not yet: %s",
				done, total, chaosDeadline, chaosUnfinished(pods, 15))
			return
		}
		if time.Since(lastLog) > 10*time.Second {
			t.Logf("%v: %d pods, %d bound, %d succeeded", time.Since(began).Round(time.Second), len(pods),
				countBound(pods), done)
			lastLog = time.Now()
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// chaosUnfinished describes up to max pods that have not succeeded.
func chaosUnfinished(pods []corev1.Pod, max int) string {
	var out []string
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase == corev1.PodSucceeded {
			continue
		}
		if len(out) == max {
			out = append(out, "...")
			break
		}
		out = append(out, fmt.Sprintf("%s (%s, node %q, assigned %q, gates %v)", p.Name, p.Status.Phase,
			p.Spec.NodeName, p.Annotations["gpusched.io/assigned-node"], gateNames(p)))
	}
	return strings.Join(out, "; ")
}

// chaosReportLog: gpusched's log has no eviction (the loss watch would
// have seen its pod go too); its revocations and re-lists are logged.
func chaosReportLog(t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	log := filepath.Join(cp.Dir, "gpusched.log")
	grep := func(s string) []string {
		lines, err := cluster.GrepLog(log, s)
		if err != nil {
			t.Fatal(err)
		}
		return lines
	}
	for _, line := range grep(logEvicted) {
		t.Errorf("gpusched evicted a pod: %s", line)
	}
	revoked := grep(logRevoked)
	for i, line := range revoked {
		if i == 10 {
			t.Logf("... %d more revocations", len(revoked)-i)
			break
		}
		t.Logf("gpusched revoked an admission: %s", line)
	}
	t.Logf("gpusched: %d lists, %d re-lists after 410 Gone, %d revocations, %d starts",
		len(grep("kube sync: listed")), len(grep("kube sync: relisting")), len(revoked), len(grep("=== ")))
}
