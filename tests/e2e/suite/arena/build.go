package arena

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"gpusched.io/e2e/suite/controlplane"
)

// Build is one cached build of tests/e2e/kueue/build.sh: the manager and
// the release's kustomize tree it was built with.
type Build struct {
	Dir string
	// Manager is bin/kueue; Config is config/, the release's manifests.
	Manager, Config string
}

// scriptBuild caches build.sh's answer for the test binary: quick once its
// cache is built, tens of minutes before.
var scriptBuild struct {
	once sync.Once
	dir  string
	err  error
}

// FindBuild is $E2E_KUEUE_DIR (prepare.sh writes it into the e2e env),
// else the last line printed by tests/e2e/kueue/build.sh under repo.
func FindBuild(repo string) (Build, error) {
	dir := os.Getenv("E2E_KUEUE_DIR")
	if dir == "" {
		var err error
		if dir, err = dirFromScript(repo); err != nil {
			return Build{}, err
		}
	}
	b := Build{Dir: dir, Manager: filepath.Join(dir, "bin", "kueue"), Config: filepath.Join(dir, "config")}
	// build.sh names it kueue-<release>-<hash>.
	if !strings.HasPrefix(filepath.Base(dir), "kueue-"+kueueRelease+"-") {
		return Build{}, fmt.Errorf("kueue build %s is not of %s, the release package arena knows the Kubernetes range of", dir, kueueRelease)
	}
	for _, path := range []string{b.Manager, filepath.Join(b.Config, "default", "kustomization.yaml")} {
		if _, err := os.Stat(path); err != nil {
			return Build{}, fmt.Errorf("kueue build: %w (E2E_KUEUE_DIR=%q)", err, os.Getenv("E2E_KUEUE_DIR"))
		}
	}
	return b, nil
}

func dirFromScript(repo string) (string, error) {
	scriptBuild.once.Do(func() {
		script := filepath.Join(repo, "tests", "e2e", "kueue", "build.sh")
		scriptBuild.dir, scriptBuild.err = controlplane.CachedBuildDir(script, "E2E_KUEUE_DIR")
	})
	return scriptBuild.dir, scriptBuild.err
}
