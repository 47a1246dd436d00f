package controlplane

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
)

// Release is the Kubernetes release of the binaries a control plane runs:
// the suite runs on the main pins (tests/e2e/k8s) and on older releases
// (tests/e2e/release-*), and a component refuses to start on a flag or
// feature gate its release does not know, so the fixture asks for what
// only a newer release has (Options.GenericWorkload) only where the
// binaries have it, and skips the test elsewhere.
type Release struct {
	Major, Minor int
	// Version is what `kube-apiserver --version` printed ("v1.35.4").
	Version string
}

// AtLeast reports whether the release is major.minor or newer.
func (r Release) AtLeast(major, minor int) bool {
	return r.Major > major || (r.Major == major && r.Minor >= minor)
}

var versionLine = regexp.MustCompile(`^Kubernetes (v(\d+)\.(\d+)\.\d+\S*)\s*$`)

// parseRelease reads `kube-apiserver --version` ("Kubernetes v1.35.4").
func parseRelease(out string) (Release, error) {
	m := versionLine.FindStringSubmatch(out)
	if m == nil {
		return Release{}, fmt.Errorf("kube-apiserver --version printed %q, want \"Kubernetes vMAJOR.MINOR.PATCH\"", out)
	}
	major, _ := strconv.Atoi(m[2])
	minor, _ := strconv.Atoi(m[3])
	return Release{Major: major, Minor: minor, Version: m[1]}, nil
}

// releases caches each kube-apiserver's answer: a test binary may start
// many control planes on the same binaries.
var releases sync.Map // path -> Release

// binariesRelease asks kube-apiserver for its version (once per path).
func binariesRelease(apiserver string) (Release, error) {
	if r, ok := releases.Load(apiserver); ok {
		return r.(Release), nil
	}
	out, err := exec.Command(apiserver, "--version").Output()
	if err != nil {
		return Release{}, fmt.Errorf("%s --version: %w", apiserver, err)
	}
	r, err := parseRelease(string(out))
	if err != nil {
		return Release{}, err
	}
	releases.Store(apiserver, r)
	return r, nil
}

// skipWhatTheReleaseLacks skips the test when it asks for an option that
// the binaries' release does not serve.
func (c *ControlPlane) skipWhatTheReleaseLacks() {
	// scheduling.k8s.io/v1beta1 Workloads and PodGroups, which gpusched
	// reads, are v1.37's: v1.36 has PodGroups as v1alpha2, v1.35 only
	// v1alpha1 Workloads.
	if c.opts.GenericWorkload && !c.Release.AtLeast(1, 37) {
		c.t.Skipf("controlplane: Options.GenericWorkload needs Kubernetes v1.37 or newer "+
			"(scheduling.k8s.io/v1beta1 PodGroups); these binaries are %s", c.Release.Version)
	}
}
