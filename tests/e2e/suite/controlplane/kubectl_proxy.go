package controlplane

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// servingOn is the line `kubectl proxy` prints once it listens.
var servingOn = regexp.MustCompile(`Starting to serve on (127\.0\.0\.1:\d+)`)

// KubectlProxy runs `kubectl proxy` as the admin on a free loopback port,
// with `args` before the command (e.g. --as=alice to be someone else), as
// a person opens the dashboard through kube-apiserver; it stops when the
// test ends. Returns its URL, e.g. http://127.0.0.1:PORT.
func (c *ControlPlane) KubectlProxy(args ...string) string {
	c.t.Helper()
	full := append([]string{"--kubeconfig=" + c.AdminKubeconfig}, args...)
	cmd := exec.Command(c.Bins.Kubectl, append(full, "proxy", "--port=0")...)
	cmd.Env = childEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(c.Dir, fmt.Sprintf("kubectl-proxy-%d.log", time.Now().UnixNano())))
	if err != nil {
		c.t.Fatal(err)
	}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("kubectl proxy: %v", err)
	}
	c.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		log.Close()
	})
	address := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if m := servingOn.FindStringSubmatch(scanner.Text()); m != nil {
				address <- m[1]
			}
		}
	}()
	select {
	case a := <-address:
		return "http://" + a
	case <-time.After(20 * time.Second):
		c.t.Fatalf("kubectl proxy %v did not say where it serves within 20 s (log %s)", args, log.Name())
		return ""
	}
}

// ArtifactPath is where a test keeps a file for people to look at, passed
// or failed (a screenshot): $E2E_LOG_DIR/artifacts/<test>/<name>, by
// default under <repo>/build/e2e-logs. Apart from the failed tests' logs,
// which replace their directory whole.
func (c *ControlPlane) ArtifactPath(name string) string {
	c.t.Helper()
	return ArtifactPath(c.t, c.Repo, name)
}

// ArtifactPath without a control plane (benchmarks).
func ArtifactPath(tb testing.TB, repo, name string) string {
	tb.Helper()
	dir := filepath.Join(filepath.Dir(logDir(repo, "x")), "artifacts", sanitize(tb.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(dir, name)
}
