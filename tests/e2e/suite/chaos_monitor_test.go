package suite_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/cluster"
)

// chaosMonitor checks, every 250 ms while the chaos test runs (not only at
// its end), the test namespace's pods as a fresh List shows them:
//
//	(a) no pod is deleted or marked for deletion before it succeeded: one
//	    queue, one priority, so nothing may be preempted. A UID listed
//	    before and missing now, or a deletionTimestamp, is a loss; so is
//	    any deletion podLossWatch sees (its informer catches a pod created
//	    and deleted between two polls too, if later);
//	(b) the queue's bound, unfinished pods never hold more GPUs than its
//	    quota, nor do its admitted-or-bound ones (an admission holds quota
//	    before its bind);
//	(c) no GPU is given twice (cluster.GpuLedger);
//	(d) no gang stays partly bound for more than chaosPartlySlack, not
//	    counting the time a component was down (kube-scheduler cannot bind
//	    the rest of a gang without the API server or gpusched).
//
// A List, not the informer's cache, for (b)-(d): after a few outages an
// informer's reflector backs off for up to 30 s before it watches again,
// and checks would run on a frozen state. A poll whose List fails (the API
// server or etcd is down) is skipped, which is why outages are short.
type chaosMonitor struct {
	client kubernetes.Interface
	watch  *podLossWatch
	nodes  []corev1.Node
	queue  string
	quota  int64

	poller *cluster.Poller

	mu          sync.Mutex
	faults      []chaosWindow
	partlySince map[string]time.Time
	listed      map[types.UID]corev1.Pod // the last successful poll's pods
	problems    []string
	seen        map[string]bool
	checks      int
	skipped     int   // polls whose List failed
	maxBound    int64 // most GPUs held by bound unfinished pods at a check
	maxHeld     int64 // most GPUs held by admitted-or-bound unfinished pods
}

// chaosWindow is one component's outage: from its kill until it was ready
// again (end is zero while it lasts).
type chaosWindow struct {
	kind       string
	begin, end time.Time
}

// chaosPartlySlack: how long a gang may stay partly bound outside
// outages. kube-scheduler binds members one by one, and retries a member
// whose attempt failed (gpusched down) after a backoff of up to 10 s.
const chaosPartlySlack = 15 * time.Second

func startChaosMonitor(ctx context.Context, client kubernetes.Interface, watch *podLossWatch, nodes []corev1.Node,
	queue string, quota int64) *chaosMonitor {
	m := &chaosMonitor{client: client, watch: watch, nodes: nodes, queue: queue, quota: quota,
		partlySince: map[string]time.Time{}, listed: map[types.UID]corev1.Pod{}, seen: map[string]bool{}}
	m.poller = cluster.StartPoller(ctx, 250*time.Millisecond, m.check)
	return m
}

// stop ends the checks (after a last one) and returns every violation
// seen, each once, in the order found.
func (m *chaosMonitor) stop() []string {
	m.poller.Stop(nil)
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.problems...)
}

// violations returns the violations seen so far.
func (m *chaosMonitor) violations() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.problems...)
}

// faultBegin and faultEnd bracket an outage of kind.
func (m *chaosMonitor) faultBegin(kind string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.faults = append(m.faults, chaosWindow{kind: kind, begin: time.Now()})
}

func (m *chaosMonitor) faultEnd() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.faults[len(m.faults)-1].end = time.Now()
}

// report keeps a violation the first time its key is seen.
func (m *chaosMonitor) report(key, format string, args ...any) {
	if m.seen[key] {
		return
	}
	m.seen[key] = true
	m.problems = append(m.problems, time.Now().Format("15:04:05.000 ")+fmt.Sprintf(format, args...))
}

func (m *chaosMonitor) check(now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	list, err := m.client.CoreV1().Pods(cluster.Namespace).List(ctx, metav1.ListOptions{})
	cancel()
	losses := m.watch.Losses()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, loss := range losses {
		_, what, _ := strings.Cut(loss.text, " ") // podLossWatch's time, then what
		m.report("loss:"+string(loss.uid), "(a) %s", what)
	}
	if err != nil {
		m.skipped++
		return
	}
	m.checks++
	m.checkVanished(list.Items)
	m.checkQuota(list.Items)
	for _, p := range cluster.NewGpuLedger(m.nodes, list.Items).Problems {
		m.report("ledger:"+p, "(c) %s", p)
	}
	for _, w := range monitorWorkloads(list.Items) {
		m.checkPartly(w, now)
	}
}

// checkVanished: (a) between two polls, a UID that is gone while it had
// not succeeded, or a deletion mark on a pod that has not.
func (m *chaosMonitor) checkVanished(pods []corev1.Pod) {
	now := make(map[types.UID]corev1.Pod, len(pods))
	for _, p := range pods {
		now[p.UID] = p
		if p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded {
			m.report("loss:"+string(p.UID), "(a) pod %s (%s, node %q) marked for deletion", p.Name, p.Status.Phase, p.Spec.NodeName)
		}
	}
	for uid, p := range m.listed {
		if _, ok := now[uid]; !ok && p.Status.Phase != corev1.PodSucceeded {
			m.report("loss:"+string(uid), "(a) pod %s (%s, node %q, assigned %q) gone since the last poll",
				p.Name, p.Status.Phase, p.Spec.NodeName, p.Annotations["gpusched.io/assigned-node"])
		}
	}
	m.listed = now
}

// latest returns the pods of the last successful poll.
func (m *chaosMonitor) latest() []corev1.Pod {
	m.mu.Lock()
	defer m.mu.Unlock()
	pods := make([]corev1.Pod, 0, len(m.listed))
	for _, p := range m.listed {
		pods = append(pods, p)
	}
	return pods
}

// checkQuota: (b), on bound and on admitted-or-bound unfinished pods.
func (m *chaosMonitor) checkQuota(pods []corev1.Pod) {
	var bound, held int64
	for i := range pods {
		p := &pods[i]
		if finished(p) || p.Labels["kueue.x-k8s.io/queue-name"] != m.queue {
			continue
		}
		gpus := cluster.Requested(p, cluster.GpuResource)
		if cluster.Bound(p) {
			bound += gpus
		}
		if cluster.Bound(p) || p.Annotations["gpusched.io/assigned-node"] != "" {
			held += gpus
		}
	}
	m.maxBound, m.maxHeld = max(m.maxBound, bound), max(m.maxHeld, held)
	if bound > m.quota {
		m.report(fmt.Sprint("bound:", bound), "(b) queue %s: bound unfinished pods hold %d GPUs, over its quota of %d",
			m.queue, bound, m.quota)
	}
	if held > m.quota {
		m.report(fmt.Sprint("held:", held), "(b) queue %s: admitted or bound unfinished pods hold %d GPUs, over its quota of %d",
			m.queue, held, m.quota)
	}
}

// checkPartly: (d), a gang with some but not all members bound for longer
// than chaosPartlySlack outside outages.
func (m *chaosMonitor) checkPartly(w *monitorWorkload, now time.Time) {
	if !strings.HasPrefix(w.key, "group:") || w.bound == 0 || w.bound >= w.size {
		delete(m.partlySince, w.key)
		return
	}
	since, ok := m.partlySince[w.key]
	if !ok {
		m.partlySince[w.key] = now
		return
	}
	if d := now.Sub(since) - m.outageWithin(since, now); d > chaosPartlySlack {
		m.report("partly:"+w.key, "(d) gang %s: partly bound (%d of %d) for %v outside outages (%v in all)",
			strings.TrimPrefix(w.key, "group:"), w.bound, w.size, d.Round(time.Second), now.Sub(since).Round(time.Second))
	}
}

// outageWithin is how much of [from, to] some component was down.
func (m *chaosMonitor) outageWithin(from, to time.Time) time.Duration {
	var total time.Duration
	for _, f := range m.faults {
		end := f.end
		if end.IsZero() {
			end = to
		}
		begin := f.begin
		if begin.Before(from) {
			begin = from
		}
		if end.After(to) {
			end = to
		}
		if end.After(begin) {
			total += end.Sub(begin)
		}
	}
	return total
}

// summary describes the checks for the test's log.
func (m *chaosMonitor) summary() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var outage time.Duration
	for _, f := range m.faults {
		outage += f.end.Sub(f.begin)
	}
	return fmt.Sprintf("%d checks (%d polls skipped: List failed); at most %d GPUs bound and %d admitted-or-bound (quota %d); "+
		"%d outages, %v down in all", m.checks, m.skipped, m.maxBound, m.maxHeld, m.quota, len(m.faults),
		outage.Round(100*time.Millisecond))
}
