package controlplane

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// helmBuild caches tests/e2e/helm/build.sh's answer for the test binary:
// quick once its cache is built, minutes before.
var helmBuild struct {
	once sync.Once
	dir  string
	err  error
}

// FindHelm is $E2E_HELM_DIR/bin/helm (prepare.sh writes it into the e2e
// env), else bin/helm under the last line printed by
// tests/e2e/helm/build.sh under repo.
func FindHelm(repo string) (string, error) {
	dir := os.Getenv("E2E_HELM_DIR")
	if dir == "" {
		helmBuild.once.Do(func() {
			script := filepath.Join(repo, "tests", "e2e", "helm", "build.sh")
			helmBuild.dir, helmBuild.err = CachedBuildDir(script, "E2E_HELM_DIR")
		})
		if helmBuild.err != nil {
			return "", helmBuild.err
		}
		dir = helmBuild.dir
	}
	helm := filepath.Join(dir, "bin", "helm")
	if _, err := os.Stat(helm); err != nil {
		return "", fmt.Errorf("helm: %w (E2E_HELM_DIR=%q)", err, os.Getenv("E2E_HELM_DIR"))
	}
	return helm, nil
}

// RunHelm runs helm with args and returns its stdout; an error carries
// stderr. Helm's cache, configuration and data live under home, and
// nothing of the caller's HELM_* or KUBECONFIG reaches it, so that a test
// reads no repository or plugin of the machine's.
func RunHelm(ctx context.Context, helm, home string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, helm, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	for _, kv := range childEnv() {
		if !strings.HasPrefix(kv, "HELM_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("helm %v: %w: %s", args, err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// Helm runs helm against this control plane as the admin.
func (c *ControlPlane) Helm(ctx context.Context, helm string, args ...string) ([]byte, error) {
	return RunHelm(ctx, helm, filepath.Join(c.Dir, "helm"), append([]string{"--kubeconfig=" + c.AdminKubeconfig}, args...)...)
}
