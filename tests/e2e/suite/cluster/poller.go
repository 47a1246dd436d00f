package cluster

import (
	"context"
	"sync"
	"time"
)

// Poller calls a check at a fixed interval on a goroutine of its own, as
// the suite's monitors do while a test runs, until its context ends or
// Stop is called.
type Poller struct {
	check    func(now time.Time)
	stopOnce sync.Once
	stopCh   chan struct{}
	done     chan struct{}
}

// StartPoller starts calling check(now) every interval.
func StartPoller(ctx context.Context, interval time.Duration, check func(now time.Time)) *Poller {
	p := &Poller{check: check, stopCh: make(chan struct{}), done: make(chan struct{})}
	go p.run(ctx, interval)
	return p
}

func (p *Poller) run(ctx context.Context, interval time.Duration) {
	defer close(p.done)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-p.stopCh:
			return
		case <-ctx.Done():
			return
		case <-ticker.C:
			p.check(time.Now())
		}
	}
}

// Stop ends the loop, waits for it, runs one last check (so that the state
// at the end is checked too) and then after, if not nil. Only the first
// call does anything; later ones return at once.
func (p *Poller) Stop(after func()) {
	p.stopOnce.Do(func() {
		close(p.stopCh)
		<-p.done
		p.check(time.Now())
		if after != nil {
			after()
		}
	})
}
