package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// BenchSchedulerOptions configure a kube-scheduler started by
// StartBenchScheduler.
type BenchSchedulerOptions struct {
	// Name makes the process's files distinct: kube-scheduler-<Name>.log,
	// kube-scheduler-<Name>.yaml.
	Name string
	// Extender keeps deploy/'s extenders (gpusched); without it
	// kube-scheduler runs its in-tree plugins only, same profile and
	// everything else.
	Extender bool
	// QPS and Burst set clientConnection.qps and .burst (0 keeps deploy/'s
	// values, or kube-scheduler's defaults of 50 and 100).
	QPS   float64
	Burst int
	// Config may change the configuration further, after the above.
	Config func(map[string]any)
	// Args are extra command-line flags (for example --feature-gates).
	Args []string
}

// BenchScheduler is a kube-scheduler that a benchmark starts and stops
// itself, beside (or instead of, with Options.Run without Scheduler) the fixture's:
// one per arm, so that each arm's CPU time and /metrics are its own.
type BenchScheduler struct {
	// URL is its HTTPS serving address (for /metrics).
	URL string
	c   *ControlPlane
	p   *process
	// stopped marks a Stop by the benchmark: any other exit is a crash.
	stopped bool
}

// StartBenchScheduler starts a kube-scheduler configured from
// deploy/kube-scheduler-config.yaml as the fixture's is (same identity,
// kubeconfig changes and extender URL), on its own port, and waits until it
// is ready. It is stopped when the test ends if Stop was not called.
func (c *ControlPlane) StartBenchScheduler(opts BenchSchedulerOptions) *BenchScheduler {
	c.t.Helper()
	s, err := c.prepareBenchScheduler(opts)
	if err != nil {
		c.t.Fatalf("controlplane: bench scheduler %s: %v", opts.Name, err)
	}
	c.t.Cleanup(s.cleanup) // before the apiserver's stop: cleanups run last-in first-out
	if err := s.p.start(); err != nil {
		c.t.Fatalf("controlplane: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.ReadyTimeout)
	defer cancel()
	began := time.Now()
	// /readyz includes kube-scheduler's informer sync, so a ready scheduler
	// already knows every node.
	if err := s.p.waitFor(ctx, c.opts.ReadyTimeout, "/readyz", probe(c.httpInsecure, s.URL+"/readyz", "")); err != nil {
		c.t.Fatalf("controlplane: %v", err)
	}
	c.t.Logf("controlplane: %s ready in %v", s.p.name, time.Since(began).Round(time.Millisecond))
	return s
}

func (c *ControlPlane) prepareBenchScheduler(opts BenchSchedulerOptions) (*BenchScheduler, error) {
	name := KubeScheduler + "-" + opts.Name
	kubeconfig := filepath.Join(c.Dir, name+".kubeconfig")
	if err := writeKubeconfig(kubeconfig, c.APIServerURL, c.pki.CAPEM, c.ids.scheduler); err != nil {
		return nil, err
	}
	config, err := schedulerConfig(c.Repo, kubeconfig, c.ports.gpusched, opts.edit)
	if err != nil {
		return nil, err
	}
	configFile := filepath.Join(c.Dir, name+".yaml")
	if err := os.WriteFile(configFile, config, 0o644); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	ports, err := FreePorts(1)
	if err != nil {
		return nil, err
	}
	// The fixture's flags (schedulerProcess) on another port; --v=2 as
	// deploy/'s Deployment runs it, so per-pod logging costs what it costs
	// in a cluster. /debug/pprof is open (loopback only) so that an arm can
	// be profiled: curl -k https://127.0.0.1:PORT/debug/pprof/profile.
	args := []string{
		"--config=" + configFile,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports[0]),
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics,/debug/pprof/*",
		"--v=2",
	}
	args = append(args, opts.Args...)
	return &BenchScheduler{
		URL: fmt.Sprintf("https://127.0.0.1:%d", ports[0]),
		c:   c,
		p:   c.newProcess(name, c.Bins.KubeScheduler, append(args, c.opts.SchedulerArgs...)),
	}, nil
}

// edit applies the options to the decoded configuration.
func (opts BenchSchedulerOptions) edit(config map[string]any) {
	if !opts.Extender {
		delete(config, "extenders")
	}
	if client, ok := config["clientConnection"].(map[string]any); ok {
		if opts.QPS > 0 {
			client["qps"] = opts.QPS
		}
		if opts.Burst > 0 {
			client["burst"] = opts.Burst
		}
	}
	if opts.Config != nil {
		opts.Config(config)
	}
}

// Pid is the process id while it runs, else 0.
func (s *BenchScheduler) Pid() int { return s.p.pid() }

// ConfigFile is the KubeSchedulerConfiguration it runs with.
func (s *BenchScheduler) ConfigFile() string {
	return filepath.Join(s.c.Dir, s.p.name+".yaml")
}

// Exited returns an error if the process is no longer running (a crash, or
// an exit after Stop).
func (s *BenchScheduler) Exited() error {
	if gone, err := s.p.exited(); gone {
		return fmt.Errorf("%s exited: %v (log %s)", s.p.name, err, s.p.logPath)
	}
	return nil
}

// Metrics returns its /metrics (Prometheus text).
func (s *BenchScheduler) Metrics() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return get(ctx, s.c.httpInsecure, s.URL+"/metrics", "")
}

// Stop sends SIGTERM (SIGKILL after 5 s) and waits for the exit. Its exit
// status is not checked: without leader election kube-scheduler exits 1 by
// design.
func (s *BenchScheduler) Stop() {
	s.stopped = true
	_ = s.p.stop(stopGrace)
}

// cleanup stops a scheduler the benchmark left running, and reports one
// that died on its own (Stop was never called and it is gone).
func (s *BenchScheduler) cleanup() {
	if gone, err := s.p.exited(); gone {
		if !s.stopped {
			s.c.t.Errorf("controlplane: %s exited during the benchmark: %v (log %s)", s.p.name, err, s.p.logPath)
		}
		return
	}
	_ = s.p.stop(stopGrace)
}
