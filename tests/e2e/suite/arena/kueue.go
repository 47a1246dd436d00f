// Package arena runs schedulers side by side on the suite's control plane,
// so that the same workloads can be put to each: for now Kueue's manager,
// built from the release pinned in tests/e2e/kueue, installed from that
// release's own manifests and run beside kube-scheduler's default profile.
package arena

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"gpusched.io/e2e/suite/controlplane"
)

// Kueue is a running Kueue manager. Its methods must be called from the
// test's goroutine.
type Kueue struct {
	Build     Build
	Manifests Manifests
	// Dir holds its configuration, kubeconfig and certificates (under the
	// control plane's Dir, so kept with the logs of a failed test).
	Dir string
	// WebhookURL is its webhook server (every clientConfig's base);
	// HealthURL serves /healthz and /readyz; MetricsURL /metrics (HTTPS,
	// authenticated).
	WebhookURL, HealthURL, MetricsURL string
	// Dynamic is the admin's dynamic client (Kueue's objects).
	Dynamic dynamic.Interface

	cp      *controlplane.ControlPlane
	cert    servingCert
	ports   ports
	applier *applier
	process *controlplane.Component
}

// Options change how StartKueue runs Kueue.
type Options struct {
	Config Config
	// ReadyTimeout bounds the manager's start (default 90 s).
	ReadyTimeout time.Duration
}

// kueueRelease is the release tests/e2e/kueue pins, and 1.minMinor to
// 1.maxMinor the Kubernetes releases it is tested on (its release notes);
// FindBuild refuses a build of another release, so that a new pin comes
// with its own range.
const (
	kueueRelease       = "v0.17.0"
	minMinor, maxMinor = 33, 35
)

// StartKueue installs Kueue into cp and runs its manager until the test
// ends. The test is skipped on a Kubernetes release Kueue's release is not
// tested on, or where the manager's mount namespace cannot be made.
func StartKueue(t testing.TB, cp *controlplane.ControlPlane, opts Options) *Kueue {
	t.Helper()
	skipUnsupported(t, cp.Release)
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 90 * time.Second
	}
	k := &Kueue{cp: cp, Dir: filepath.Join(cp.Dir, "kueue")}
	ctx, cancel := context.WithTimeout(context.Background(), 2*opts.ReadyTimeout)
	defer cancel()
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"build and manifests", k.prepare},
		{"install", k.install},
		{"manager", func(ctx context.Context) error { return k.start(ctx, opts) }},
	}
	for _, step := range steps {
		began := time.Now()
		if err := step.run(ctx); err != nil {
			t.Fatalf("arena: kueue %s: %v", step.name, err)
		}
		t.Logf("arena: kueue %s ready in %v", step.name, time.Since(began).Round(time.Millisecond))
	}
	return k
}

// RequireEnv, when set (CI sets it, tests/e2e/prepare.sh), makes a
// machine that cannot run Kueue's manager a failure instead of a skip.
const RequireEnv = "E2E_REQUIRE_ARENA"

func skipUnsupported(t testing.TB, r controlplane.Release) {
	t.Helper()
	if err := canMountOverlay(); err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("arena: %s is set and Kueue's manager cannot have its mount namespace: %v", RequireEnv, err)
		}
		t.Skipf("arena: Kueue's manager needs a mount namespace for its fixed certificate paths: %v", err)
	}
	if r.Major != 1 || r.Minor < minMinor || r.Minor > maxMinor {
		t.Skipf("arena: Kueue %s is tested on Kubernetes 1.%d to 1.%d; these binaries are %s (run it on release-1.35)",
			kueueRelease, minMinor, maxMinor, r.Version)
	}
}

// prepare finds the build, renders its manifests, picks ports and makes
// the certificate.
func (k *Kueue) prepare(context.Context) error {
	var err error
	if k.Build, err = FindBuild(k.cp.Repo); err != nil {
		return err
	}
	if k.Manifests, err = RenderManifests(k.cp.Bins.Kubectl, k.Build); err != nil {
		return err
	}
	free, err := controlplane.FreePorts(4)
	if err != nil {
		return err
	}
	k.ports = ports{Health: free[0], Metrics: free[1], Webhook: free[2], Visibility: free[3]}
	k.WebhookURL = fmt.Sprintf("https://127.0.0.1:%d", k.ports.Webhook)
	k.HealthURL = fmt.Sprintf("http://127.0.0.1:%d", k.ports.Health)
	k.MetricsURL = fmt.Sprintf("https://127.0.0.1:%d/metrics", k.ports.Metrics)
	if k.cert, err = newServingCert(); err != nil {
		return err
	}
	return k.cert.writeTo(k.certDir())
}

func (k *Kueue) certDir() string { return filepath.Join(k.Dir, "certs") }

// install applies the release's CRDs, RBAC and webhook configurations,
// every clientConfig pointed at the manager on loopback.
func (k *Kueue) install(ctx context.Context) error {
	if err := pointAtLoopback(k.Manifests.Install, k.WebhookURL, k.cert.CAPEM); err != nil {
		return err
	}
	var err error
	if k.Dynamic, err = dynamic.NewForConfig(k.cp.RestConfig); err != nil {
		return err
	}
	k.applier = newApplier(k.cp.Client, k.Dynamic)
	return k.applier.apply(ctx, k.Manifests.Install)
}

// start writes the configuration and kubeconfig, starts the manager and
// waits for its /readyz (its webhook server serves).
func (k *Kueue) start(ctx context.Context, opts Options) error {
	m := k.Manifests
	config, err := managerConfig(m.ManagerConfig, opts.Config, k.ports, m.Namespace, k.certDir())
	if err != nil {
		return err
	}
	configFile := filepath.Join(k.Dir, "config.yaml")
	if err := os.WriteFile(configFile, config, 0o644); err != nil {
		return err
	}
	kubeconfig := filepath.Join(k.Dir, "kubeconfig")
	err = writeManagerKubeconfig(ctx, k.cp.Client, kubeconfig, k.cp.APIServerURL, k.cp.CAPEM(), m.Namespace, m.ServiceAccount)
	if err != nil {
		return err
	}
	root := overlay{dir: filepath.Join(k.cp.Dir, "kueue-root")}
	if err := root.prepare(k.cert); err != nil {
		return err
	}
	// As its Deployment runs it (--zap-log-level=2), on these files.
	// E2E_KUEUE_LOG_LEVEL raises it to read a run closely (the provisioning
	// controller says what it decides at 3).
	level := "2"
	if l := os.Getenv("E2E_KUEUE_LOG_LEVEL"); l != "" {
		level = l
	}
	args := []string{"--config=" + configFile, "--kubeconfig=" + kubeconfig, "--zap-log-level=" + level}
	path, argv := root.command([]string{k.Dir, k.Build.Dir}, k.Build.Manager, args)
	if k.process, err = k.cp.StartComponent("kueue", path, argv); err != nil {
		return err
	}
	client := &http.Client{Timeout: 5 * time.Second}
	return k.process.WaitFor(ctx, opts.ReadyTimeout, "/readyz", func(ctx context.Context) error {
		return httpOK(ctx, client, k.HealthURL+"/readyz")
	})
}

// Stop stops the manager (SIGTERM, as a Deployment scaled to 0 would) and
// deletes its webhook configurations: the first two steps of the switch
// to gpusched (README, "Switching from Kueue"). Its CRDs, objects and
// RBAC stay.
func (k *Kueue) Stop(ctx context.Context) error {
	_ = k.process.Stop() // its exit status after SIGTERM says nothing
	for _, obj := range k.Manifests.Install {
		var err error
		switch obj.GetKind() {
		case "MutatingWebhookConfiguration":
			err = k.cp.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, obj.GetName(), metav1.DeleteOptions{})
		case "ValidatingWebhookConfiguration":
			err = k.cp.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, obj.GetName(), metav1.DeleteOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

func httpOK(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
