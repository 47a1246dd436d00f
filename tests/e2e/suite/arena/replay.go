package arena

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// createWorkers bounds the creates in flight: a gang's members are
// created together, and arrivals due at the same instant in parallel.
const createWorkers = 16

// Replayer creates each arrival's pods at its time and, as a Job
// controller would, replaces a member whose pod ended without succeeding
// (preempted: deleted by the arm, then Failed by the kubelet) with a new
// pod of the same group, so that every workload eventually completes, as
// Kueue's performance runner requeues an evicted workload.
type Replayer struct {
	client        kubernetes.Interface
	schedulerName string
	rec           *Recorder
	byKey         map[string]Arrival
	slots         chan struct{}

	mu sync.Mutex
	// inflight creates; once closed no create starts (Wait).
	inflight int
	idle     *sync.Cond
	closed   bool
	// lag[i] is how late arrival i's first create was sent (its due time
	// passed and a create slot free).
	lag   []time.Duration
	start time.Time
	errs  []error
	// replacing holds the pods already replaced (namespace/name).
	replacing    map[string]bool
	replacements int
	ctx          context.Context
}

// NewReplayer replays for an arm whose pods name schedulerName.
func NewReplayer(client kubernetes.Interface, schedulerName string, arrivals []Arrival) *Replayer {
	p := &Replayer{
		client: client, schedulerName: schedulerName, byKey: map[string]Arrival{},
		slots: make(chan struct{}, createWorkers), replacing: map[string]bool{},
	}
	p.idle = sync.NewCond(&p.mu)
	for _, a := range arrivals {
		p.byKey[a.Key()] = a
	}
	return p
}

// Run sends each arrival at start + At until all are sent or ctx ends;
// the creates run on. Replacements go on until Wait.
func (p *Replayer) Run(ctx context.Context, rec *Recorder, start time.Time, arrivals []Arrival) error {
	p.mu.Lock()
	p.rec, p.ctx, p.start = rec, ctx, start
	p.mu.Unlock()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for _, a := range arrivals {
		timer.Reset(time.Until(start.Add(a.At)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		for m := range a.Pods {
			p.create(ctx, a, m, 0)
		}
	}
	return nil
}

// Replace is the Recorder's onFailed: a new pod for the failed one's slot
// (the next attempt), unless it was replaced already.
func (p *Replayer) Replace(failed PodRecord) {
	p.mu.Lock()
	a, known := p.byKey[failed.Workload]
	key := failed.Namespace + "/" + failed.Name
	ctx := p.ctx
	if !known || p.replacing[key] || p.closed || ctx == nil || ctx.Err() != nil {
		p.mu.Unlock()
		return
	}
	p.replacing[key] = true
	p.replacements++
	p.mu.Unlock()
	p.create(ctx, a, failed.Member, failed.Attempt+1)
}

// create sends one pod's create on a worker slot.
func (p *Replayer) create(ctx context.Context, a Arrival, member, attempt int) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.inflight++
	p.mu.Unlock()
	go func() {
		defer p.finished()
		select {
		case p.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-p.slots }()
		if member == 0 && attempt == 0 {
			p.noteLag(time.Since(p.start.Add(a.At)))
		}
		pod := a.Pod(member, attempt, p.schedulerName)
		_, err := p.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			if ctx.Err() == nil {
				p.fail(fmt.Errorf("create pod %s/%s: %w", pod.Namespace, pod.Name, err))
			}
			return
		}
		p.rec.NoteCreated(pod.Namespace, pod.Name, time.Now())
	}()
}

func (p *Replayer) noteLag(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lag = append(p.lag, d)
}

func (p *Replayer) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.errs = append(p.errs, err)
}

func (p *Replayer) finished() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight--
	if p.inflight == 0 {
		p.idle.Broadcast()
	}
}

// Wait stops further creates (replacements) and waits for those in
// flight.
func (p *Replayer) Wait() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for p.inflight > 0 {
		p.idle.Wait()
	}
}

// Stats are the send lags of the arrivals and the number of replacements.
func (p *Replayer) Stats() (lags []time.Duration, replacements int, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Duration(nil), p.lag...), p.replacements, errors.Join(p.errs...)
}
