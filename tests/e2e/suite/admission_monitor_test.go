package suite_test

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"gpusched.io/e2e/suite/cluster"
)

// admissionMonitor checks, every few hundred milliseconds while a test
// runs (not only at its end), the promises of the queueing core as seen
// from outside, on the test namespace's pods (from a watch) and the given
// nodes:
//   - a ClusterQueue's admitted, unfinished pods never hold more GPUs than
//     its quota (two replicas admitting at once would exceed it);
//   - no member of a gang stays bound for longer than gangWriteSlack while
//     not all its members are admitted;
//   - no gang stays partly bound for longer than partlyLimit;
//   - no GPU is given twice (cluster.GpuLedger);
//   - with orderSlack > 0, admissions follow each ClusterQueue's order
//     (StrictFIFO, equal priorities): by creation second, then by name. A
//     workload counts as admitted when the first of its pods carries
//     gpusched.io/assigned-node; an earlier one must be seen admitted no
//     later than orderSlack after a later one (the writer writes in order,
//     but a write it retries lands late).
//
// Pods carry the queue label (LocalQueue = ClusterQueue name, as
// queuePolicy makes them); a gang is a Kueue pod group.
type admissionMonitor struct {
	quotas      map[string]int64
	partlyLimit time.Duration
	orderSlack  time.Duration
	earlySlack  time.Duration
	nodes       []corev1.Node
	// extra runs with each check and returns problems of its own.
	extra func() []string

	pods        cache.GenericLister
	factory     informers.SharedInformerFactory
	factoryStop chan struct{}
	poller      *cluster.Poller

	mu          sync.Mutex
	problems    []string
	seen        map[string]bool
	admittedAt  map[string]time.Time // workload -> first seen admitted
	partlySince map[string]time.Time
	earlySince  map[string]time.Time // gang -> first seen bound before whole
	checks      int
}

// monitorWorkload is a single pod or a gang, as the engine queues it.
type monitorWorkload struct {
	key, queue string
	created    time.Time
	size       int
	admitted   int // members carrying assigned-node
	bound      int
	gpus       int64 // of admitted or bound members that have not finished
}

func startAdmissionMonitor(ctx context.Context, client kubernetes.Interface, nodes []corev1.Node,
	quotas map[string]int64, partlyLimit, orderSlack time.Duration, extra func() []string) *admissionMonitor {
	m := &admissionMonitor{quotas: quotas, partlyLimit: partlyLimit, orderSlack: orderSlack, earlySlack: gangWriteSlack,
		nodes: nodes, extra: extra,
		factoryStop: make(chan struct{}), seen: map[string]bool{},
		admittedAt: map[string]time.Time{}, partlySince: map[string]time.Time{}}
	m.factory = informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(cluster.Namespace))
	informer := m.factory.Core().V1().Pods()
	m.pods = cache.NewGenericLister(informer.Informer().GetIndexer(), corev1.Resource("pods"))
	m.factory.Start(m.factoryStop)
	m.factory.WaitForCacheSync(m.factoryStop)
	m.poller = cluster.StartPoller(ctx, 250*time.Millisecond, m.check)
	return m
}

// stop ends the checks (one last one first) and returns every problem
// seen, each once.
func (m *admissionMonitor) stop() []string {
	m.poller.Stop(func() {
		close(m.factoryStop)
		m.factory.Shutdown()
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.problems...)
}

func (m *admissionMonitor) checkCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.checks
}

// report keeps a problem the first time its key is seen.
func (m *admissionMonitor) report(key, format string, args ...any) {
	if m.seen[key] {
		return
	}
	m.seen[key] = true
	m.problems = append(m.problems, time.Now().Format("15:04:05.000 ")+fmt.Sprintf(format, args...))
}

// listPods returns the namespace's pods as the monitor's watch has them.
func (m *admissionMonitor) listPods() []corev1.Pod {
	objs, _ := m.pods.List(labels.Everything())
	pods := make([]corev1.Pod, 0, len(objs))
	for _, o := range objs {
		pods = append(pods, *o.(*corev1.Pod))
	}
	return pods
}

func (m *admissionMonitor) check(now time.Time) {
	pods := m.listPods()
	var extra []string
	if m.extra != nil {
		extra = m.extra()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.checks++
	for _, p := range extra {
		m.report(p, "%s", p)
	}
	for _, p := range cluster.NewGpuLedger(m.nodes, pods).Problems {
		m.report(p, "%s", p)
	}
	workloads := monitorWorkloads(pods)
	m.checkQuotas(workloads)
	for _, w := range workloads {
		m.checkGang(w, now)
		if _, seen := m.admittedAt[w.key]; !seen && w.admitted > 0 {
			m.admittedAt[w.key] = now
		}
	}
	if m.orderSlack > 0 {
		m.checkOrder(workloads, now)
	}
}

func monitorWorkloads(pods []corev1.Pod) []*monitorWorkload {
	byKey := map[string]*monitorWorkload{}
	var out []*monitorWorkload
	for i := range pods {
		p := &pods[i]
		key, size := p.Name, 1
		if group := p.Labels["kueue.x-k8s.io/pod-group-name"]; group != "" {
			key = "group:" + group
			size, _ = strconv.Atoi(p.Annotations["kueue.x-k8s.io/pod-group-total-count"])
		}
		w := byKey[key]
		if w == nil {
			w = &monitorWorkload{key: key, queue: p.Labels["kueue.x-k8s.io/queue-name"], size: size,
				created: p.CreationTimestamp.Time}
			byKey[key] = w
			out = append(out, w)
		}
		if p.CreationTimestamp.Time.Before(w.created) {
			w.created = p.CreationTimestamp.Time
		}
		admitted := p.Annotations["gpusched.io/assigned-node"] != ""
		if admitted {
			w.admitted++
		}
		if cluster.Bound(p) {
			w.bound++
		}
		if (admitted || cluster.Bound(p)) && !finished(p) {
			w.gpus += cluster.Requested(p, cluster.GpuResource)
		}
	}
	return out
}

func (m *admissionMonitor) checkQuotas(workloads []*monitorWorkload) {
	held := map[string]int64{}
	for _, w := range workloads {
		held[w.queue] += w.gpus
	}
	for queue, quota := range m.quotas {
		if held[queue] > quota {
			m.report("quota:"+queue+":"+strconv.FormatInt(held[queue], 10),
				"ClusterQueue %s: admitted unfinished pods hold %d GPUs, over its quota of %d", queue, held[queue], quota)
		}
	}
}

func (m *admissionMonitor) checkGang(w *monitorWorkload, now time.Time) {
	if !strings.HasPrefix(w.key, "group:") {
		return
	}
	// The engine admits a gang whole, but its admission reaches the API one
	// pod at a time, and kube-scheduler may bind the first member before the
	// last one's write lands: a member bound while the others' admissions
	// are still being written is a promise broken only when it lasts past
	// gangWriteSlack.
	if m.earlySince == nil {
		m.earlySince = map[string]time.Time{}
	}
	if w.bound > 0 && w.admitted < w.size {
		if since, ok := m.earlySince[w.key]; !ok {
			m.earlySince[w.key] = now
		} else if now.Sub(since) > m.earlySlack {
			m.report("early:"+w.key, "gang %s: %d members bound while %d of %d are admitted, for more than %v",
				w.key, w.bound, w.admitted, w.size, m.earlySlack)
		}
	} else {
		delete(m.earlySince, w.key)
	}
	if w.bound == 0 || w.bound >= w.size {
		delete(m.partlySince, w.key)
		return
	}
	since, ok := m.partlySince[w.key]
	if !ok {
		m.partlySince[w.key] = now
	} else if now.Sub(since) > m.partlyLimit {
		m.report("partly:"+w.key, "gang %s: partly bound (%d of %d) for more than %v", w.key, w.bound, w.size, m.partlyLimit)
	}
}

// checkOrder walks each queue from its tail: the earliest admission among
// the workloads after each one must not come orderSlack before it was
// admitted (or before now, while it waits).
func (m *admissionMonitor) checkOrder(workloads []*monitorWorkload, now time.Time) {
	byQueue := map[string][]*monitorWorkload{}
	for _, w := range workloads {
		byQueue[w.queue] = append(byQueue[w.queue], w)
	}
	for queue, list := range byQueue {
		sort.Slice(list, func(i, j int) bool {
			a, b := list[i].created.Unix(), list[j].created.Unix()
			if a != b {
				return a < b
			}
			return list[i].key < list[j].key
		})
		var laterFirst time.Time
		var laterKey string
		for i := len(list) - 1; i >= 0; i-- {
			w := list[i]
			at, admitted := m.admittedAt[w.key]
			if !admitted {
				at = now
			}
			if !laterFirst.IsZero() && at.Sub(laterFirst) > m.orderSlack {
				m.report("order:"+w.key, "ClusterQueue %s: %s (created %s) admitted %v after %s, which comes later in the queue",
					queue, w.key, w.created.Format("15:04:05"), at.Sub(laterFirst).Round(time.Millisecond), laterKey)
			}
			if admitted && (laterFirst.IsZero() || m.admittedAt[w.key].Before(laterFirst)) {
				laterFirst, laterKey = m.admittedAt[w.key], w.key
			}
		}
	}
}
