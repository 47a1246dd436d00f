package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Binaries are the executables a control plane runs.
type Binaries struct {
	Etcd          string
	KubeAPIServer string
	KubeScheduler string
	// KubeControllerManager is checked only by a control plane that runs
	// it (Options.ControllerManager), so a bin directory built before it was
	// added still serves every other test.
	KubeControllerManager string
	Kubectl               string
	Gpusched              string
}

// RepoRoot is the gpusched checkout: $GPUSCHED_REPO, else the first directory
// above the working directory that holds deploy/kube-scheduler-config.yaml
// (go test runs each package in its own directory, somewhere below it).
func RepoRoot() (string, error) {
	if repo := os.Getenv("GPUSCHED_REPO"); repo != "" {
		return filepath.Abs(repo)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repo: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "deploy", "kube-scheduler-config.yaml")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find repo: no deploy/kube-scheduler-config.yaml above the working directory; set GPUSCHED_REPO")
		}
		dir = parent
	}
}

// upstreamBinDir is $E2E_BIN_DIR, else the last line printed by
// tests/e2e/build-binaries.sh (which returns at once when its cache is
// built, and otherwise builds it: tens of minutes cold).
func upstreamBinDir(repo string) (string, error) {
	if dir := os.Getenv("E2E_BIN_DIR"); dir != "" {
		return dir, nil
	}
	return binDirFromScript(repo)
}

// scriptBinDir caches build-binaries.sh's answer: the script is quick once
// its cache is built, but a test binary may start many control planes.
var scriptBinDir struct {
	once sync.Once
	dir  string
	err  error
}

func binDirFromScript(repo string) (string, error) {
	scriptBinDir.once.Do(func() {
		script := filepath.Join(repo, "tests", "e2e", "build-binaries.sh")
		scriptBinDir.dir, scriptBinDir.err = CachedBuildDir(script, "E2E_BIN_DIR")
	})
	return scriptBinDir.dir, scriptBinDir.err
}

// CachedBuildDir runs a build script of tests/e2e (build-binaries.sh,
// kueue/build.sh) and returns the directory it prints last: its build in
// the cache, made or reused. skipEnv names the variable that spares the
// script.
func CachedBuildDir(script, skipEnv string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("bash", script)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s (set %s to skip it): %w\n%s", script, skipEnv, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	return strings.TrimSpace(lines[len(lines)-1]), nil
}

// FindBinaries locates every executable, checking each exists.
func FindBinaries(repo string) (Binaries, error) {
	dir, err := upstreamBinDir(repo)
	if err != nil {
		return Binaries{}, err
	}
	gpusched := os.Getenv("GPUSCHED_BIN")
	if gpusched == "" {
		gpusched = filepath.Join(repo, "build", "gpusched")
	}
	bins := Binaries{
		Etcd:                  filepath.Join(dir, "etcd"),
		KubeAPIServer:         filepath.Join(dir, "kube-apiserver"),
		KubeScheduler:         filepath.Join(dir, "kube-scheduler"),
		KubeControllerManager: filepath.Join(dir, "kube-controller-manager"),
		Kubectl:               filepath.Join(dir, "kubectl"),
		Gpusched:              gpusched,
	}
	for _, path := range []string{bins.Etcd, bins.KubeAPIServer, bins.KubeScheduler, bins.Kubectl, bins.Gpusched} {
		if info, err := os.Stat(path); err != nil {
			return Binaries{}, fmt.Errorf("binary: %w (E2E_BIN_DIR=%q, GPUSCHED_BIN=%q)", err, os.Getenv("E2E_BIN_DIR"), os.Getenv("GPUSCHED_BIN"))
		} else if info.Mode()&0o111 == 0 {
			return Binaries{}, fmt.Errorf("binary %s is not executable", path)
		}
	}
	return bins, nil
}
