package controlplane

import (
	"context"
	"time"
)

// Component is a process another package runs beside the control plane
// (package arena's Kueue manager), handled as the fixture handles its own:
// it logs to <Dir>/<name>.log, kept with the other logs and its tail
// printed when the test fails; it runs in its own process group with the
// components' environment (no proxy, no KUBECONFIG) and dies with the test
// binary. It is stopped (SIGTERM, SIGKILL after 5 s) before the control
// plane, and exiting before that fails the test.
type Component struct {
	c       *ControlPlane
	p       *process
	stopped bool // by Stop: its exit is the test's doing
}

// StartComponent starts path with args as the component name (its log
// file's name, unique in the control plane) and registers its stop with
// t.Cleanup, which runs before the control plane's own cleanup.
func (c *ControlPlane) StartComponent(name, path string, args []string) (*Component, error) {
	p := c.newProcess(name, path, args)
	if err := p.start(); err != nil {
		return nil, err
	}
	comp := &Component{c: c, p: p}
	c.t.Cleanup(comp.cleanup)
	return comp, nil
}

// WaitFor polls probe until it succeeds, the component exits, or timeout;
// what names the wait in the error.
func (m *Component) WaitFor(ctx context.Context, timeout time.Duration, what string, probe func(context.Context) error) error {
	return m.p.waitFor(ctx, timeout, what, probe)
}

// LogPath is the component's log file.
func (m *Component) LogPath() string { return m.p.logPath }

// Pid is the component's pid, or 0 when it is not running.
func (m *Component) Pid() int { return m.p.pid() }

// Stop stops the component as its cleanup would (SIGTERM, SIGKILL after
// 5 s), at a moment the test chooses: the exit is then not a failure.
func (m *Component) Stop() error {
	m.stopped = true
	return m.p.stop(stopGrace)
}

// cleanup reports an exit the test did not cause, else stops the process.
func (m *Component) cleanup() {
	if m.stopped {
		return
	}
	if gone, err := m.p.exited(); gone {
		m.c.t.Errorf("controlplane: %s exited during the test: %v (log %s)", m.p.name, err, m.p.logPath)
		return
	}
	_ = m.p.stop(stopGrace)
}
