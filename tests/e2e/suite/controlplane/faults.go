package controlplane

import (
	"context"
	"fmt"
	"time"

	"gpusched.io/e2e/suite/kubelet"
)

// Faults of the other components, for the restart and chaos tests: each
// is SIGKILLed (no graceful shutdown: open connections break at once, as
// when a node dies) and started again with the same flags, ports and data.
// A process stopped here is marked in stoppedByTest, so the fixture does
// not report its exit as a crash; starting it again clears the mark.

// KillAPIServer SIGKILLs kube-apiserver and waits until it is gone. Its
// clients' watches break without the 2 s a SIGTERM grants them.
func (c *ControlPlane) KillAPIServer() {
	c.t.Helper()
	c.stoppedByTest[c.apiserver] = true
	c.apiserver.kill()
}

// StartAPIServer starts kube-apiserver again (same flags, port and etcd)
// and waits until /readyz passes.
func (c *ControlPlane) StartAPIServer() {
	c.t.Helper()
	c.restart(c.apiserver, c.waitAPIServer)
}

// KillEtcd SIGKILLs etcd and waits until it is gone. Its data directory is
// kept (nothing is lost that it acknowledged: --unsafe-no-fsync only
// matters to a power cut, and the page cache survives a killed process).
func (c *ControlPlane) KillEtcd() {
	c.t.Helper()
	c.stoppedByTest[c.etcd] = true
	c.etcd.kill()
}

// StartEtcd starts etcd again on its data directory and waits for /health.
// kube-apiserver keeps running while etcd is away and reconnects by itself;
// wait for it with WaitAPIServerReady.
func (c *ControlPlane) StartEtcd() {
	c.t.Helper()
	c.restart(c.etcd, func(ctx context.Context) error {
		return c.etcd.waitFor(ctx, c.opts.ReadyTimeout, "/health", etcdProbe(c.httpInsecure, c.etcdURL()))
	})
}

// WaitAPIServerReady waits until kube-apiserver's /readyz passes again
// (its etcd check fails while etcd is away).
func (c *ControlPlane) WaitAPIServerReady() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.ReadyTimeout)
	defer cancel()
	if err := c.waitAPIServer(ctx); err != nil {
		c.t.Fatalf("controlplane: %v", err)
	}
}

// StopScheduler stops kube-scheduler (SIGTERM, then SIGKILL after 5 s):
// pods gpusched admits stay unbound until StartScheduler. Its exit status
// is not checked: without leader election it exits 1 by design.
func (c *ControlPlane) StopScheduler() {
	c.t.Helper()
	c.mustHaveScheduler()
	c.stoppedByTest[c.scheduler] = true
	_ = c.scheduler.stop(stopGrace)
}

// StartScheduler starts kube-scheduler again (same configuration and port)
// and waits until /readyz passes (its informers have synced).
func (c *ControlPlane) StartScheduler() {
	c.t.Helper()
	c.mustHaveScheduler()
	c.restart(c.scheduler, func(ctx context.Context) error {
		return c.scheduler.waitFor(ctx, c.opts.ReadyTimeout, "/readyz",
			probe(c.httpInsecure, c.SchedulerURL+"/readyz", ""))
	})
}

// RestartKubelet stops the fake kubelet and starts a new one, whose
// informer lists the pods at once. After a few API server outages in a
// minute, client-go's reflector waits up to 30 s before it watches again
// (its backoff resets only after 2 quiet minutes), and pods would neither
// start nor finish meanwhile: a chaos test restarts it after each outage so
// that its pods keep flowing.
func (c *ControlPlane) RestartKubelet() {
	c.t.Helper()
	if c.kubelet == nil {
		c.t.Fatal("controlplane: no fake kubelet (Options.Run without Kubelet)")
	}
	c.kubelet.Stop()
	fmt.Fprintf(c.kubeletLog, "%s restarted\n", time.Now().Format("15:04:05.000"))
	opts := []kubelet.Option{kubelet.WithLog(c.kubeletLog)}
	if c.opts.KubeletFailsDeletedPods {
		opts = append(opts, kubelet.WithTerminalPhaseOnDeletion())
	}
	var err error
	if c.kubelet, err = kubelet.StartFakeKubelet(context.Background(), c.Client, opts...); err != nil {
		c.t.Fatalf("controlplane: %v", err)
	}
}

func (c *ControlPlane) mustHaveScheduler() {
	c.t.Helper()
	if c.scheduler == nil || len(c.Replicas) > 0 {
		c.t.Fatal("controlplane: no single kube-scheduler (Options.Run without Scheduler, or Replicas): use the replica methods")
	}
}

// restart starts a stopped component and waits with ready, failing the
// test if it does not come up within ReadyTimeout.
func (c *ControlPlane) restart(p *process, ready func(context.Context) error) {
	c.t.Helper()
	began := time.Now()
	if err := p.start(); err != nil {
		c.t.Fatalf("controlplane: %v", err)
	}
	c.stoppedByTest[p] = false
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.ReadyTimeout)
	defer cancel()
	if err := ready(ctx); err != nil {
		c.t.Fatalf("controlplane: restart: %v", err)
	}
	c.t.Logf("controlplane: %s (re)started in %v", p.name, time.Since(began).Round(time.Millisecond))
}
