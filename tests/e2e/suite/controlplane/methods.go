package controlplane

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"time"
)

// KillGpusched SIGKILLs gpusched and waits until it is gone.
func (c *ControlPlane) KillGpusched() {
	c.t.Helper()
	c.mustHaveGpusched()
	c.stoppedByTest[c.gpusched] = true
	c.gpusched.kill()
}

// StopGpusched sends gpusched SIGTERM, waits up to 5 s (then SIGKILLs it)
// and returns its exit error: nil when it exited with status 0.
func (c *ControlPlane) StopGpusched() error {
	c.t.Helper()
	c.mustHaveGpusched()
	c.stoppedByTest[c.gpusched] = true
	return c.gpusched.stop(stopGrace)
}

// StartGpusched starts gpusched again (or for the first time with
// Options.Run without Gpusched), same port and flags, and waits as Start
// does.
func (c *ControlPlane) StartGpusched() {
	c.t.Helper()
	c.startGpusched(c.opts.GpuschedWait == GpuschedReady)
}

// StartGpuschedUntilListening starts gpusched and waits only until it
// listens (/healthz), not until it has listed the cluster.
func (c *ControlPlane) StartGpuschedUntilListening() {
	c.t.Helper()
	c.startGpusched(false)
}

func (c *ControlPlane) startGpusched(ready bool) {
	c.t.Helper()
	c.mustHaveGpusched()
	if err := c.gpusched.start(); err != nil {
		c.t.Fatalf("controlplane: %v", err)
	}
	c.stoppedByTest[c.gpusched] = false
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.ReadyTimeout)
	defer cancel()
	began := time.Now()
	if err := c.waitGpusched(ctx, ready); err != nil {
		c.t.Fatalf("controlplane: %v", err)
	}
	c.t.Logf("controlplane: gpusched (re)started in %v", time.Since(began).Round(time.Millisecond))
}

func (c *ControlPlane) mustHaveGpusched() {
	c.t.Helper()
	if c.gpusched == nil {
		c.t.Fatal("controlplane: gpusched was never prepared")
	}
}

// RestartAPIServer stops kube-apiserver (SIGTERM) and starts it again with
// the same flags, port and etcd, waiting until it is ready. Clients
// reconnect by themselves.
func (c *ControlPlane) RestartAPIServer() {
	c.t.Helper()
	c.stoppedByTest[c.apiserver] = true
	if err := c.apiserver.stop(stopGrace); err != nil {
		c.t.Logf("controlplane: kube-apiserver exit after SIGTERM: %v", err)
	}
	began := time.Now()
	if err := c.apiserver.start(); err != nil {
		c.t.Fatalf("controlplane: %v", err)
	}
	c.stoppedByTest[c.apiserver] = false
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.ReadyTimeout)
	defer cancel()
	if err := c.waitAPIServer(ctx); err != nil {
		c.t.Fatalf("controlplane: restart: %v", err)
	}
	c.t.Logf("controlplane: kube-apiserver restarted in %v", time.Since(began).Round(time.Millisecond))
}

// SchedulerMetrics returns kube-scheduler's /metrics (Prometheus text).
func (c *ControlPlane) SchedulerMetrics() (string, error) {
	if c.SchedulerURL == "" {
		return "", fmt.Errorf("kube-scheduler not started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return get(ctx, c.httpInsecure, c.SchedulerURL+"/metrics", "")
}

// GpuschedMetrics returns gpusched's /metrics (Prometheus text).
func (c *ControlPlane) GpuschedMetrics() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return get(ctx, c.httpInsecure, c.GpuschedURL+"/metrics", "")
}

// Pid is the pid of a running component (Etcd, KubeAPIServer,
// KubeScheduler, KubeControllerManager, Gpusched), or 0.
func (c *ControlPlane) Pid(component string) int {
	return c.Pids()[component]
}

// ViewerToken is ViewerUser's bearer token.
func (c *ControlPlane) ViewerToken() string { return c.ids.viewer.token }

// CAPEM is the cluster CA that kube-apiserver's serving certificate chains
// to, for kubeconfigs a test writes.
func (c *ControlPlane) CAPEM() string { return c.pki.CAPEM }

// Pids maps each running component to its pid (for /proc/<pid>/stat).
func (c *ControlPlane) Pids() map[string]int {
	pids := map[string]int{}
	for _, p := range c.processes() {
		if p != nil && p.running() {
			pids[p.name] = p.pid()
		}
	}
	return pids
}

// Kubectl runs the built kubectl as the admin and returns its stdout; an
// error carries stderr.
func (c *ControlPlane) Kubectl(ctx context.Context, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, c.Bins.Kubectl, append([]string{"--kubeconfig=" + c.AdminKubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = childEnv()
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("kubectl %v: %w: %s", args, err, stderr.String())
	}
	return stdout.Bytes(), nil
}
