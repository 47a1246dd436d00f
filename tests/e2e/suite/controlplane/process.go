package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// stopGrace is how long a component may take to exit after SIGTERM.
const stopGrace = 5 * time.Second

// process is one run of a component at a time; start may be called again
// after it exited (restarts keep the same flags, ports and log file).
type process struct {
	name    string
	path    string
	args    []string
	logPath string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{} // closed when the current run exited
	exitErr error         // valid once done is closed
}

// childEnv is the environment of every component: the test's, minus what
// would make a component reach something other than this control plane.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "KUBECONFIG",
			"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT":
			continue
		}
		env = append(env, kv)
	}
	return env
}

func (p *process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && !isClosed(p.done) {
		return fmt.Errorf("%s: already running (pid %d)", p.name, p.cmd.Process.Pid)
	}
	log, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: log file: %w", p.name, err)
	}
	// A header per run, so that restarts are visible in the log.
	fmt.Fprintf(log, "=== %s: %s %s\n", time.Now().Format(time.RFC3339Nano), p.path, strings.Join(p.args, " "))
	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = childEnv()
	// Own process group: stop() signals the group, so nothing a component
	// forks outlives it. Pdeathsig: killed if the test binary dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("%s: start: %w", p.name, err)
	}
	done := make(chan struct{})
	p.cmd, p.done, p.exitErr = cmd, done, nil
	go func() {
		err := cmd.Wait()
		log.Close()
		p.mu.Lock()
		p.exitErr = err
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// current returns the running command and its done channel (nil if never
// started).
func (p *process) current() (*exec.Cmd, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd, p.done
}

// running reports whether the current run has not exited yet.
func (p *process) running() bool {
	cmd, done := p.current()
	return cmd != nil && !isClosed(done)
}

// pid is the current run's pid, or 0 when it is not running.
func (p *process) pid() int {
	cmd, done := p.current()
	if cmd == nil || isClosed(done) {
		return 0
	}
	return cmd.Process.Pid
}

// exited returns the exit error of the last run and whether it has exited.
func (p *process) exited() (bool, error) {
	cmd, done := p.current()
	if cmd == nil || !isClosed(done) {
		return false, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return true, p.exitErr
}

// stop sends SIGTERM to the process group, waits up to grace, then SIGKILLs
// it. It returns the exit error of the run (nil for status 0).
func (p *process) stop(grace time.Duration) error {
	cmd, done := p.current()
	if cmd == nil {
		return nil
	}
	if !isClosed(done) {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(grace):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	_, err := p.exited()
	return err
}

// kill SIGKILLs the process group and waits for the exit.
func (p *process) kill() {
	cmd, done := p.current()
	if cmd == nil || isClosed(done) {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
}

// errExited marks a component that exited while being waited for.
var errExited = errors.New("exited")

// waitFor polls probe until it succeeds, the process exits, or timeout.
func (p *process) waitFor(ctx context.Context, timeout time.Duration, what string, probe func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 25*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if gone, exitErr := p.exited(); gone {
			return false, fmt.Errorf("%w (%v)", errExited, exitErr)
		}
		last = probe(ctx)
		return last == nil, nil
	})
	if err != nil {
		// The log's tail is printed by the cleanup of the failed test.
		return fmt.Errorf("%s: waiting for %s: %w (last probe: %v); log %s",
			p.name, what, err, last, p.logPath)
	}
	return nil
}

// FreePorts returns n distinct TCP ports on 127.0.0.1 that were free a
// moment ago (held open together so that they differ). The kernel spreads
// them over the ephemeral range, so parallel test processes rarely collide;
// a component that loses the race fails its start with "address already in
// use" in its log.
func FreePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
