// Package controlplane runs a real Kubernetes control plane on loopback for
// end-to-end tests: etcd, kube-apiserver, kube-scheduler configured by
// deploy/kube-scheduler-config.yaml, and gpusched as its extender, with
// deploy/'s RBAC. Ports are free ones, so tests may run in parallel
// processes. No kubelet (package kubelet plays the kubelet's part), and
// kube-controller-manager only with the controllers a test asks for.
package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"gpusched.io/e2e/suite/kubelet"
)

// Options change what Start starts. The zero value starts everything but
// kube-controller-manager and waits until each component is ready.
type Options struct {
	// Run names the components Start runs besides etcd and kube-apiserver;
	// nil runs all of them (AllComponents).
	Run *Components
	// GpuschedWait is what Start and StartGpusched wait for (default
	// GpuschedReady).
	GpuschedWait GpuschedWait
	// GpuschedArgs are appended to `gpusched serve ...`.
	GpuschedArgs []string
	// Policy is passed as --policy.
	Policy string
	// GpuschedViaProxy points gpusched's kubeconfig at a DelayProxy
	// (ControlPlane.Proxy) in front of the apiserver.
	GpuschedViaProxy bool
	// SchedulerConfig may change the KubeSchedulerConfiguration (as decoded
	// YAML) after the fixture's own changes.
	SchedulerConfig func(map[string]any)
	// SchedulerArgs and APIServerArgs are appended to those components'
	// flags.
	SchedulerArgs []string
	APIServerArgs []string
	// KubeletFailsDeletedPods makes the fake kubelet mark a terminating pod
	// Failed before deleting it, as a real kubelet does; a Job with a
	// podFailurePolicy replaces its pods only once they are Failed.
	KubeletFailsDeletedPods bool
	// Webhook makes gpusched serve its admission webhook on a free loopback
	// port (certificate for 127.0.0.1 and localhost, kept in its Secret),
	// and registers deploy/'s MutatingWebhookConfiguration with
	// clientConfig.url pointing there instead of the Service. gpusched
	// fills in its caBundle, as in a cluster.
	Webhook bool
	// Visibility makes gpusched serve its aggregated visibility API on a
	// free loopback port, gives kube-apiserver a front proxy (its own CA
	// and client certificate), and registers deploy/'s APIService through
	// an ExternalName Service to localhost. gpusched fills in the
	// APIService's caBundle, as in a cluster.
	Visibility bool
	// GenericWorkload serves Kubernetes' own Workload and PodGroup API
	// (scheduling.k8s.io/v1beta1, KEP-4671), off by default in v1.37: the
	// GenericWorkload feature gate on kube-apiserver, kube-scheduler (whose
	// default profile then has the GangScheduling plugin) and
	// kube-controller-manager, and kube-apiserver's
	// --runtime-config=scheduling.k8s.io/v1beta1=true. Added before each
	// component's own extra args, which may still change them.
	GenericWorkload bool
	// ControllerManager, if set, starts kube-controller-manager after
	// gpusched and kube-scheduler; nil (the default) starts none.
	ControllerManager *ControllerManager
	// ReadyTimeout bounds each component's start (default 60 s).
	ReadyTimeout time.Duration
	// InstallsDeploy: the test installs deploy/'s objects itself (the
	// Helm chart, helm_install_test.go) and runs its pod with
	// RunDeploymentPod, so the fixture creates none of them; kube-apiserver
	// gets a front proxy, as a cluster's has, for the visibility API they
	// register.
	InstallsDeploy bool
	// Replicas of 2 or more start that many gpusched + kube-scheduler
	// pairs (ControlPlane.Replicas) in place of one, as deploy/'s
	// Deployment runs them: kube-scheduler elects its leader on deploy/'s
	// Lease (with the short Replica* timings) and each gpusched follows
	// it. GpuschedURL, SchedulerURL and the *Gpusched methods are replica
	// 0's; with Webhook, the webhook's URL is a proxy that forwards to the
	// first replica that accepts, as its Service would. Needs `unshare
	// --uts` (the test is skipped without it).
	Replicas int
}

// Components are the parts of the control plane that a test may leave
// out (etcd and kube-apiserver always run).
type Components struct {
	// Scheduler runs the fixture's kube-scheduler.
	Scheduler bool
	// Gpusched runs gpusched from the start; without it StartGpusched
	// starts it later (its port, and so kube-scheduler's extender URL, is
	// fixed by Start).
	Gpusched bool
	// Kubelet runs the fake kubelet; without it bound pods stay Pending.
	Kubelet bool
}

// AllComponents is what a zero Options runs.
var AllComponents = Components{Scheduler: true, Gpusched: true, Kubelet: true}

// GpuschedWait is how far Start and StartGpusched wait for gpusched.
type GpuschedWait int

const (
	// GpuschedReady waits until gpusched has listed the cluster (/readyz).
	GpuschedReady GpuschedWait = iota
	// GpuschedListening waits only until gpusched listens (/healthz).
	GpuschedListening
)

// runs is the components Start runs.
func (o Options) runs() Components {
	if o.Run == nil {
		return AllComponents
	}
	return *o.Run
}

// ControlPlane is a running control plane. Its methods must be called from
// the test's goroutine (they call t.Fatal).
type ControlPlane struct {
	// Client and RestConfig act as the admin (system:masters).
	Client     kubernetes.Interface
	RestConfig *rest.Config
	// Dir holds every component's log (<component>.log), configuration and
	// data. It is removed when the test passes and kept when it fails.
	Dir  string
	Repo string
	Bins Binaries
	// Release is the Kubernetes release of Bins (their kube-apiserver's).
	Release Release
	// AdminKubeconfig is a kubeconfig file for the admin (for kubectl).
	AdminKubeconfig string
	APIServerURL    string
	GpuschedURL     string
	// SchedulerURL is kube-scheduler's HTTPS serving address ("" if not
	// started).
	SchedulerURL string
	// WebhookURL is gpusched's admission webhook (https://127.0.0.1:PORT
	// /mutate-pods) with Options.Webhook; "" otherwise.
	WebhookURL string
	// Proxy sits between gpusched and the apiserver when
	// Options.GpuschedViaProxy is set; nil otherwise.
	Proxy *DelayProxy
	// Replicas are the pairs of Options.Replicas, and LeaderLease
	// ("namespace/name") the Lease their kube-schedulers elect on.
	Replicas    []*Replica
	LeaderLease string
	// webhookService stands for the webhook's Service with Replicas.
	webhookService *DelayProxy

	t     testing.TB
	opts  Options
	pki   *pki
	front *frontProxy // with Options.Visibility
	ids   struct{ admin, scheduler, gpusched, controllerManager, viewer identity }
	ports struct {
		etcdClient, etcdPeer, apiserver, scheduler, gpusched, webhook, controllerManager, visibility int
	}

	etcd, apiserver, scheduler, gpusched, controllerManager *process
	// stoppedByTest marks processes the test stopped on purpose; any other
	// exit before cleanup is a crash and fails the test.
	stoppedByTest map[*process]bool
	kubelet       *kubelet.FakeKubelet
	kubeletLog    *os.File
	httpCA        *http.Client
	httpInsecure  *http.Client
}

// startStep is one component's start, in Start's order.
type startStep struct {
	name string
	run  func(context.Context) error
}

// Start starts a control plane and registers its teardown with t.Cleanup.
func Start(t testing.TB, opts Options) *ControlPlane {
	t.Helper()
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 60 * time.Second
	}
	c := &ControlPlane{t: t, opts: opts, stoppedByTest: map[*process]bool{}}
	t.Cleanup(c.cleanup) // first: it also removes what a failed prepare made
	if err := c.prepare(); err != nil {
		t.Fatalf("controlplane: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*opts.ReadyTimeout)
	defer cancel()
	began := time.Now()
	steps := []startStep{
		{Etcd, c.startEtcd},
		{KubeAPIServer, c.startAPIServer},
		{"deploy RBAC", c.applyRBAC},
		{"admission webhook", c.registerWebhook},
		{"visibility API", c.registerVisibility},
		{"gpusched + kube-scheduler", c.startSchedulers},
	}
	if opts.ControllerManager != nil {
		steps = append(steps, startStep{KubeControllerManager, c.startControllerManager})
	}
	steps = append(steps, startStep{"fake kubelet", c.startKubelet})
	for _, step := range steps {
		stepBegan := time.Now()
		if err := step.run(ctx); err != nil {
			t.Fatalf("controlplane: %s: %v", step.name, err)
		}
		t.Logf("controlplane: %s ready in %v", step.name, time.Since(stepBegan).Round(time.Millisecond))
	}
	t.Logf("controlplane: Kubernetes %s ready in %v (dir %s)", c.Release.Version,
		time.Since(began).Round(time.Millisecond), c.Dir)
	return c
}

// prepare finds the binaries, makes the directory, certificates, tokens,
// kubeconfigs and ports; it starts nothing.
func (c *ControlPlane) prepare() error {
	var err error
	if c.Repo, err = RepoRoot(); err != nil {
		return err
	}
	if c.Bins, err = FindBinaries(c.Repo); err != nil {
		return err
	}
	if c.Release, err = binariesRelease(c.Bins.KubeAPIServer); err != nil {
		return err
	}
	c.skipWhatTheReleaseLacks()
	if c.Dir, err = os.MkdirTemp("", "gpusched-e2e-"+sanitize(c.t.Name())+"-"); err != nil {
		return fmt.Errorf("dir: %w", err)
	}
	if c.pki, err = newPKI(c.Dir); err != nil {
		return err
	}
	if c.opts.Visibility || c.opts.InstallsDeploy {
		if c.front, err = newFrontProxy(c.Dir); err != nil {
			return err
		}
	}
	if err := c.prepareControllerManager(); err != nil {
		return err
	}
	if c.ids.admin, c.ids.scheduler, c.ids.gpusched, c.ids.controllerManager, c.ids.viewer, err = newIdentities(); err != nil {
		return err
	}
	ports, err := FreePorts(8)
	if err != nil {
		return err
	}
	c.ports.etcdClient, c.ports.etcdPeer, c.ports.apiserver = ports[0], ports[1], ports[2]
	c.ports.scheduler, c.ports.gpusched, c.ports.webhook = ports[3], ports[4], ports[5]
	c.ports.controllerManager, c.ports.visibility = ports[6], ports[7]
	c.APIServerURL = fmt.Sprintf("https://127.0.0.1:%d", c.ports.apiserver)
	c.GpuschedURL = fmt.Sprintf("http://127.0.0.1:%d", c.ports.gpusched)
	if err := c.httpClients(); err != nil {
		return err
	}
	c.RestConfig = restConfig(c.APIServerURL, c.pki.CAPEM, c.ids.admin)
	if c.Client, err = kubernetes.NewForConfig(c.RestConfig); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	c.AdminKubeconfig = filepath.Join(c.Dir, "admin.kubeconfig")
	if err := c.replicaPorts(); err != nil {
		return err
	}
	return writeKubeconfig(c.AdminKubeconfig, c.APIServerURL, c.pki.CAPEM, c.ids.admin)
}

func (c *ControlPlane) startEtcd(ctx context.Context) error {
	c.etcd = c.etcdProcess()
	if err := c.etcd.start(); err != nil {
		return err
	}
	return c.etcd.waitFor(ctx, c.opts.ReadyTimeout, "/health", etcdProbe(c.httpInsecure, c.etcdURL()))
}

func (c *ControlPlane) startAPIServer(ctx context.Context) error {
	tokens := filepath.Join(c.Dir, "tokens.csv")
	if err := writeTokenFile(tokens, c.ids.admin, c.ids.scheduler, c.ids.gpusched, c.ids.controllerManager, c.ids.viewer); err != nil {
		return err
	}
	c.apiserver = c.apiserverProcess(tokens)
	if err := c.apiserver.start(); err != nil {
		return err
	}
	return c.waitAPIServer(ctx)
}

// waitAPIServer waits for /readyz, which includes the RBAC bootstrap roles
// (system:kube-scheduler, ...) that deploy/'s bindings refer to.
func (c *ControlPlane) waitAPIServer(ctx context.Context) error {
	return c.apiserver.waitFor(ctx, c.opts.ReadyTimeout, "/readyz",
		probe(c.httpCA, c.APIServerURL+"/readyz", c.ids.admin.token))
}

func (c *ControlPlane) applyRBAC(ctx context.Context) error {
	if c.opts.InstallsDeploy {
		return nil
	}
	objs, err := RenderDeploy(c.Repo, c.Bins.Kubectl)
	if err != nil {
		return err
	}
	return applyDeployRBAC(ctx, c.Client, objs)
}

// startSchedulers starts gpusched and kube-scheduler together and then
// waits for both, so their start-up times overlap.
func (c *ControlPlane) startSchedulers(ctx context.Context) error {
	if len(c.Replicas) > 0 {
		return c.startReplicas(ctx)
	}
	if err := c.prepareGpusched(); err != nil {
		return err
	}
	run := c.opts.runs()
	if run.Gpusched {
		if err := c.gpusched.start(); err != nil {
			return err
		}
	}
	if run.Scheduler {
		if err := c.prepareScheduler(); err != nil {
			return err
		}
		if err := c.scheduler.start(); err != nil {
			return err
		}
	}
	if run.Gpusched {
		if err := c.waitGpusched(ctx, c.opts.GpuschedWait == GpuschedReady); err != nil {
			return err
		}
	}
	if !run.Scheduler {
		return nil
	}
	return c.scheduler.waitFor(ctx, c.opts.ReadyTimeout, "/readyz",
		probe(c.httpInsecure, c.SchedulerURL+"/readyz", ""))
}

func (c *ControlPlane) prepareGpusched() error {
	server := c.APIServerURL
	if c.opts.GpuschedViaProxy {
		var err error
		if c.Proxy, err = newDelayProxy(fmt.Sprintf("127.0.0.1:%d", c.ports.apiserver)); err != nil {
			return err
		}
		server = "https://" + c.Proxy.Addr()
	}
	kubeconfig := filepath.Join(c.Dir, "gpusched.kubeconfig")
	if err := writeKubeconfig(kubeconfig, server, c.pki.CAPEM, c.ids.gpusched); err != nil {
		return err
	}
	c.gpusched = c.gpuschedProcess(kubeconfig)
	return nil
}

func (c *ControlPlane) prepareScheduler() error {
	kubeconfig := filepath.Join(c.Dir, "kube-scheduler.kubeconfig")
	if err := writeKubeconfig(kubeconfig, c.APIServerURL, c.pki.CAPEM, c.ids.scheduler); err != nil {
		return err
	}
	config, err := schedulerConfig(c.Repo, kubeconfig, c.ports.gpusched, c.opts.SchedulerConfig)
	if err != nil {
		return err
	}
	configFile := filepath.Join(c.Dir, "kube-scheduler-config.yaml")
	if err := os.WriteFile(configFile, config, 0o644); err != nil {
		return fmt.Errorf("scheduler config: %w", err)
	}
	c.scheduler = c.schedulerProcess(configFile)
	c.SchedulerURL = fmt.Sprintf("https://127.0.0.1:%d", c.ports.scheduler)
	return nil
}

// waitGpusched waits until gpusched listens and, if ready, until it has
// listed the cluster.
func (c *ControlPlane) waitGpusched(ctx context.Context, ready bool) error {
	path := "/healthz"
	if ready {
		path = "/readyz"
	}
	return c.gpusched.waitFor(ctx, c.opts.ReadyTimeout, path, probe(c.httpInsecure, c.GpuschedURL+path, ""))
}

// startKubelet starts the fake kubelet for the whole test (not bounded by
// Start's context); it logs to fake-kubelet.log.
func (c *ControlPlane) startKubelet(context.Context) error {
	if !c.opts.runs().Kubelet {
		return nil
	}
	var err error
	if c.kubeletLog, err = os.Create(filepath.Join(c.Dir, "fake-kubelet.log")); err != nil {
		return fmt.Errorf("fake kubelet log: %w", err)
	}
	opts := []kubelet.Option{kubelet.WithLog(c.kubeletLog)}
	if c.opts.KubeletFailsDeletedPods {
		opts = append(opts, kubelet.WithTerminalPhaseOnDeletion())
	}
	c.kubelet, err = kubelet.StartFakeKubelet(context.Background(), c.Client, opts...)
	return err
}

// processes are every component, newest first (gpusched before its
// kube-scheduler, the replicas' pairs in order).
func (c *ControlPlane) processes() []*process {
	if len(c.Replicas) == 0 {
		return []*process{c.controllerManager, c.gpusched, c.scheduler, c.apiserver, c.etcd}
	}
	all := []*process{c.controllerManager}
	for _, r := range c.Replicas {
		all = append(all, r.gpusched, r.scheduler)
	}
	return append(all, c.apiserver, c.etcd)
}

// cleanup stops everything, newest first, and keeps the files of a failed
// test.
func (c *ControlPlane) cleanup() {
	if c.kubelet != nil {
		c.kubelet.Stop()
	}
	if c.kubeletLog != nil {
		c.kubeletLog.Close()
	}
	for _, p := range c.processes() {
		if p == nil {
			continue
		}
		if gone, err := p.exited(); gone {
			if !c.stoppedByTest[p] {
				c.t.Errorf("controlplane: %s exited during the test: %v (log %s)", p.name, err, p.logPath)
			}
			continue
		}
		// gpusched must exit 0 within stopGrace of SIGTERM. The others'
		// status is not checked: kube-scheduler without leader election
		// exits 1 ("finished without leader elect") and etcd re-raises
		// SIGTERM, by design.
		if err := p.stop(stopGrace); err != nil && strings.HasPrefix(p.name, Gpusched) {
			c.t.Errorf("controlplane: gpusched after SIGTERM: %v, want exit status 0 (log %s)", err, p.logPath)
		}
	}
	for _, proxy := range []*DelayProxy{c.Proxy, c.webhookService} {
		if proxy != nil {
			proxy.Close()
		}
	}
	if c.Dir == "" {
		return
	}
	if c.t.Failed() && c.etcd != nil { // something ran: its logs matter
		c.keepLogs()
		return
	}
	// E2E_KEEP_LOGS=1 keeps a passing test's files too: to read what a
	// component did when nothing failed (an arena round's peer, say).
	if os.Getenv("E2E_KEEP_LOGS") != "" && c.etcd != nil {
		// One folder per control plane: a test may start several (the
		// arena's two arms), each kept beside the others.
		dst := logDir(c.Repo, c.t.Name()) + "-" + filepath.Base(c.Dir)
		if err := copyDir(c.Dir, dst); err == nil {
			c.t.Logf("controlplane: logs kept in %s (E2E_KEEP_LOGS)", dst)
		}
	}
	os.RemoveAll(c.Dir)
}
