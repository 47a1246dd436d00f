package suite_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// Two replicas as deploy/ runs them: two pods, each a kube-scheduler with
// leader election on deploy/'s Lease and a gpusched that follows that Lease.

const (
	// haReportingController is gpusched's Events' reportingController
	// (api/kube/event_recorder.h).
	haReportingController = "gpusched.io/scheduler"
	// haSlack covers a loaded machine's delays on top of a hand-over's own
	// bound: process exit, the Lease write, the watch.
	haSlack = 4 * time.Second
	// haReleasedBound: a kube-scheduler stopped gracefully releases the
	// Lease (ReleaseOnCancel); the other takes it at its next retry, which
	// client-go jitters up to 2.2 retry periods. Below the lease duration,
	// so a hand-over within it shows the Lease was released, not expired.
	haReleasedBound = 22 * controlplane.ReplicaRetryPeriod / 10
	// haExpiredBound: a killed kube-scheduler's Lease must expire first.
	haExpiredBound = controlplane.ReplicaLeaseDuration + haReleasedBound
)

// TestTwoReplicasHandOverWithoutDoubleAdmission: with a queue of 16 GPUs
// and gangs of 4 x 4 flowing through it, exactly one gpusched decides (the
// standby's gauge says so, and every gpusched Event names the deciding
// replica as its reportingInstance); a graceful stop of the leader's pod
// hands over at once (the Lease is released) and a kill -9 within the lease
// duration plus a retry period; waiting gangs are then admitted by the new
// leader. Throughout, checked every 250 ms: never two replicas deciding, no
// GPU twice, the queue's admitted pods within its quota (no double
// admission), no member bound before its gang is admitted, no gang partly
// bound for long; at the end no pod was admitted twice.
func TestTwoReplicasHandOverWithoutDoubleAdmission(t *testing.T) {
	policy := queuePolicy(t, map[string]int{"team-a": 16}, nil)
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy, Replicas: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 420*time.Second)
	defer cancel()
	nodes := cluster.SetUpDemoCluster(ctx, t, cp)
	first, _ := haWaitLeader(ctx, t, cp, time.Now(), 60*time.Second)
	monitor := startAdmissionMonitor(ctx, cp.Client, nodes, map[string]int64{"team-a": 16}, 45*time.Second, 0,
		func() []string { return haOneDeciding(cp) })
	defer monitor.stop()
	runFor := func(b *cluster.PodBuilder) *cluster.PodBuilder { return b.RunFor(6 * time.Second) }

	began := time.Now()
	for _, g := range []string{"g1", "g2", "g3"} {
		queuedGang(ctx, t, cp, "team-a", g, 4, 4, runFor)
	}
	waitGangBound(ctx, t, cp, "g1", 4, 60*time.Second)
	stopped := time.Now()
	if err := cp.StopReplica(first); err != nil {
		t.Errorf("%s's gpusched after SIGTERM: %v, want exit status 0", first.Name, err)
	}
	second, secondBegan := haWaitLeader(ctx, t, cp, stopped, 60*time.Second)
	t.Logf("graceful stop of %s: %s decides %v later", first.Name, second.Name, secondBegan.Sub(stopped).Round(time.Millisecond))
	if second == first || secondBegan.Sub(stopped) > haReleasedBound+haSlack {
		t.Errorf("after a graceful stop %s took over %v later, want the other replica within %v (+%v slack)",
			second.Name, secondBegan.Sub(stopped).Round(time.Millisecond), haReleasedBound, haSlack)
	}
	haCheckEventsBy(ctx, t, cp, began, stopped, first)
	cp.StartReplica(first) // back as the standby
	waitGangBound(ctx, t, cp, "g2", 4, 90*time.Second)
	waitGangBound(ctx, t, cp, "g3", 4, 90*time.Second)

	for _, g := range []string{"g4", "g5"} {
		queuedGang(ctx, t, cp, "team-a", g, 4, 4, runFor)
	}
	haWaitAdmitted(ctx, t, cp, "g4", 60*time.Second)
	killed := time.Now()
	cp.KillReplica(second)
	t.Logf("kill -9 landed with %d of 4 members of g4 admitted", haCountAdmitted(ctx, t, cp, "g4"))
	third, tookOver := haWaitLeader(ctx, t, cp, killed, 60*time.Second)
	t.Logf("kill -9 of %s: %s decides %v later", second.Name, third.Name, tookOver.Sub(killed).Round(time.Millisecond))
	if third != first || tookOver.Sub(killed) > haExpiredBound+haSlack {
		t.Errorf("after a kill %s took over %v later, want %s within %v (+%v slack)",
			third.Name, tookOver.Sub(killed).Round(time.Millisecond), first.Name, haExpiredBound, haSlack)
	}
	haCheckEventsBy(ctx, t, cp, secondBegan, killed, second)
	waitGangBound(ctx, t, cp, "g4", 4, 90*time.Second)
	waitGangBound(ctx, t, cp, "g5", 4, 90*time.Second)
	haCheckEventsBy(ctx, t, cp, tookOver, time.Now(), third)

	for _, p := range monitor.stop() {
		t.Error(p)
	}
	haCheckAdmittedOnce(ctx, t, cp)
	faultCheckLedger(ctx, t, cp.Client)
	t.Logf("%d checks while the replicas handed over", monitor.checkCount())
}

// haGauge reads gpusched_standby from a replica's /metrics: 1 standing by,
// 0 deciding, -1 unreachable or absent.
func haGauge(cp *controlplane.ControlPlane, r *controlplane.Replica) int {
	metrics, err := cp.ReplicaMetrics(r)
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(metrics, "\n") {
		if value, ok := strings.CutPrefix(line, "gpusched_standby "); ok {
			switch strings.TrimSpace(value) {
			case "0":
				return 0
			case "1":
				return 1
			}
		}
	}
	return -1
}

// haOneDeciding: at most one replica's gpusched decides.
func haOneDeciding(cp *controlplane.ControlPlane) []string {
	var deciding []string
	for _, r := range cp.Replicas {
		if haGauge(cp, r) == 0 {
			deciding = append(deciding, r.Name)
		}
	}
	if len(deciding) > 1 {
		return []string{fmt.Sprintf("replicas %v decide at once", deciding)}
	}
	return nil
}

// haWaitLeader waits until the Lease names a replica whose gpusched
// decides while every other running one stands by, and returns it with
// the time that was first seen.
func haWaitLeader(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, since time.Time,
	timeout time.Duration) (*controlplane.Replica, time.Time) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var holder string
	for time.Now().Before(deadline) && ctx.Err() == nil {
		var err error
		holder, err = cp.LeaseHolder(ctx)
		leader := cp.ReplicaOf(holder)
		if err == nil && leader != nil && haGauge(cp, leader) == 0 && haOthersStandBy(cp, leader) {
			return leader, time.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no replica decided within %v of %s (Lease holder %q)", timeout, since.Format("15:04:05.000"), holder)
	return nil, time.Time{}
}

func haOthersStandBy(cp *controlplane.ControlPlane, leader *controlplane.Replica) bool {
	for _, r := range cp.Replicas {
		if r != leader && haGauge(cp, r) == 0 {
			return false
		}
	}
	return true
}

// haWaitAdmitted returns as soon as a pod watch shows a member of the gang
// carrying its admission, so that a kill right after it lands while the
// rest of the gang's admission writes are in flight (the hand-over must
// then neither bind the gang half nor admit it twice).
func haWaitAdmitted(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, group string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	selector := metav1.ListOptions{LabelSelector: "kueue.x-k8s.io/pod-group-name=" + group}
	list, err := cp.Client.CoreV1().Pods(cluster.Namespace).List(ctx, selector)
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if haAdmitted(&list.Items[i]) {
			return
		}
	}
	selector.ResourceVersion = list.ResourceVersion
	w, err := cp.Client.CoreV1().Pods(cluster.Namespace).Watch(ctx, selector)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for e := range w.ResultChan() {
		if p, ok := e.Object.(*corev1.Pod); ok && haAdmitted(p) {
			return
		}
	}
	t.Fatalf("gang %s: no member admitted within %v", group, timeout)
}

func haAdmitted(p *corev1.Pod) bool { return p.Annotations["gpusched.io/assigned-node"] != "" }

// haCountAdmitted: how many of the gang's members carry their admission.
func haCountAdmitted(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, group string) int {
	t.Helper()
	n := 0
	for _, p := range gangPods(ctx, t, cp, group) {
		if haAdmitted(&p) {
			n++
		}
	}
	return n
}

// haGpuschedEvents lists gpusched's Events in the test namespace.
func haGpuschedEvents(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) []haEvent {
	t.Helper()
	list, err := cp.Client.EventsV1().Events(cluster.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []haEvent
	for _, e := range list.Items {
		if e.ReportingController != haReportingController {
			continue
		}
		at := e.EventTime.Time
		if at.IsZero() {
			at = e.CreationTimestamp.Time
		}
		out = append(out, haEvent{at: at, instance: e.ReportingInstance, reason: e.Reason,
			object: e.Regarding.Kind + "/" + e.Regarding.Name, uid: string(e.Regarding.UID)})
	}
	return out
}

type haEvent struct {
	at                            time.Time
	instance, reason, object, uid string
}

// haCheckEventsBy: every gpusched Event written in [from, to) names want:
// the replica that decided then. There were some, or nothing was tested.
func haCheckEventsBy(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, from, to time.Time, want *controlplane.Replica) {
	t.Helper()
	n := 0
	for _, e := range haGpuschedEvents(ctx, t, cp) {
		if e.at.Before(from) || !e.at.Before(to) {
			continue
		}
		n++
		if e.instance != want.Name {
			t.Errorf("%s Event %s on %s written by %q while %s decided", e.at.Format("15:04:05.000"), e.reason,
				e.object, e.instance, want.Name)
		}
	}
	if n == 0 {
		t.Errorf("no gpusched Event between %s and %s: which replica decided cannot be seen",
			from.Format("15:04:05.000"), to.Format("15:04:05.000"))
	}
}

// haCheckAdmittedOnce: no pod has two Admitted Events (nothing in this
// test is preempted or rolled back, so a second one is a second admission).
func haCheckAdmittedOnce(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	admitted := map[string][]string{}
	for _, e := range haGpuschedEvents(ctx, t, cp) {
		if e.reason == "Admitted" && strings.HasPrefix(e.object, "Pod/") {
			admitted[e.uid] = append(admitted[e.uid], e.object+" by "+e.instance)
		}
	}
	pods := queuedPods(ctx, t, cp)
	for _, p := range pods {
		switch n := len(admitted[string(p.UID)]); {
		case n > 1:
			t.Errorf("pod %s admitted %d times: %v", p.Name, n, admitted[string(p.UID)])
		case n == 0 && p.Status.Phase != corev1.PodPending:
			t.Logf("pod %s ran without an Admitted Event", p.Name)
		}
	}
}
