package suite_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/cluster"
)

// faultChurn creates a 1-GPU pod every 150 ms and deletes the one created
// three steps before, through the admin client, until stopped; API errors
// (the restart) are counted and the step is retried on the next tick.
type faultChurn struct {
	mu                       sync.Mutex
	created, deleted, errors int
	done                     chan struct{}
	finished                 sync.WaitGroup
}

func faultStartChurn(ctx context.Context, client kubernetes.Interface) *faultChurn {
	c := &faultChurn{done: make(chan struct{})}
	c.finished.Add(1)
	go func() {
		defer c.finished.Done()
		ticker := time.NewTicker(150 * time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-c.done:
				return
			case <-ctx.Done():
				return
			case <-ticker.C:
				c.step(ctx, client)
			}
		}
	}()
	return c
}

func (c *faultChurn) step(ctx context.Context, client kubernetes.Interface) {
	c.mu.Lock()
	created, deleted := c.created, c.deleted
	c.mu.Unlock()
	var err error
	if created-deleted > 3 {
		err = client.CoreV1().Pods(cluster.Namespace).Delete(ctx, fmt.Sprintf("churn-%d", deleted), metav1.DeleteOptions{})
		if err == nil {
			deleted++
		}
	} else {
		_, err = cluster.GpuPod(fmt.Sprintf("churn-%d", created), 1).Create(ctx, client)
		if err == nil {
			created++
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.created, c.deleted = created, deleted
	if err != nil {
		c.errors++
	}
}

func (c *faultChurn) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.created
}

func (c *faultChurn) deletedCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deleted
}

func (c *faultChurn) errorCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errors
}

// waitCreated waits until the churn has created n pods.
func (c *faultChurn) waitCreated(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return c.count() >= n, nil
	})
	if err != nil {
		t.Fatalf("churn created %d pods, want %d: %v", c.count(), n, err)
	}
}

func (c *faultChurn) stop() {
	close(c.done)
	c.finished.Wait()
}
