package arena

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// An Arm is one scheduling system the arena puts a scenario to. Start
// starts a fresh control plane (stopped when the test ends) running the
// arm with the scenario's policy; the caller then creates the nodes and
// replays the pods.
type Arm interface {
	Name() string
	Start(t testing.TB, s *Scenario) *ArmCluster
}

// ArmCluster is a running arm.
type ArmCluster struct {
	Arm string
	CP  *controlplane.ControlPlane
	// SchedulerName is spec.schedulerName of the arm's pods.
	SchedulerName string
	// Pids are the arm's processes by name (for /proc/<pid>/stat).
	Pids func() map[string]int
	// Config holds what the arm ran with (configuration files' text).
	Config map[string]string
	// NodesSeen waits until the arm's scheduler sees n nodes.
	NodesSeen func(ctx context.Context, t testing.TB, n int)
}

// The arms, by name, and the order a round runs them in.
var (
	Arms     = map[string]Arm{"kueue": KueueArm{}, "gpusched": GpuschedArm{}}
	ArmOrder = []string{"kueue", "gpusched"}
)

// kubeletFailsDeletedPods: in both arms a deleted (preempted) pod is
// first marked Failed, as a real kubelet reports it. Kueue's pod group
// counts a terminating pod that is still Running as active, so its
// preempted groups would otherwise never be replaced.
const kubeletFailsDeletedPods = true

// KueueArm is Kueue's manager (StartKueue) beside kube-scheduler's
// default profile, the policy applied as Kueue objects (KueueMeaning).
type KueueArm struct{}

// KueueWaitForPodsReady is the Kueue arm's waitForPodsReady: on, as
// Kueue's docs recommend for all-or-nothing pod groups, with the timeout
// its configuration requires stated (5 minutes, longer than any round, so
// it never evicts here) and blockAdmission off (on, it admits one
// workload at a time until its pods are Ready).
var KueueWaitForPodsReady = WaitForPodsReady{Timeout: 5 * time.Minute}

// KueueClientQPSEnv, when set (e.g. "200"), raises the Kueue manager's
// client limit (clientConnection qps, burst twice that) from the
// release's 50/100: the runner's -kueue-qps, to see whether the limit is
// Kueue's bottleneck here. Unset in the figures the README quotes.
const KueueClientQPSEnv = "ARENA_KUEUE_QPS"

// KueueArmConfig is the Kueue arm's configuration for s: the sections of
// the scenario's own Kueue Configuration, if its policy has one, over the
// arm's defaults.
func KueueArmConfig(s *Scenario) (Config, error) {
	wait := KueueWaitForPodsReady
	c := Config{Namespaces: s.Namespaces(), WaitForPodsReady: &wait}
	if qps, err := strconv.Atoi(os.Getenv(KueueClientQPSEnv)); err == nil && qps > 0 {
		c.ClientQPS = qps
	}
	overlay, err := KueueConfigurationOverlay(s.Policy)
	c.Overlay = overlay
	return c, err
}

func (KueueArm) Name() string { return "kueue" }

func (KueueArm) Start(t testing.TB, s *Scenario) *ArmCluster {
	t.Helper()
	cp := controlplane.Start(t, controlplane.Options{
		Run:                     &controlplane.Components{Scheduler: true, Kubelet: true},
		SchedulerConfig:         DefaultSchedulerProfile,
		KubeletFailsDeletedPods: kubeletFailsDeletedPods,
	})
	config, err := KueueArmConfig(s)
	if err != nil {
		t.Fatal(err)
	}
	// Before the manager: Kueue sets its provisioning controller up only
	// if the CRD is served when it starts.
	if s.Provisioner != nil {
		if err := InstallProvisioningRequestCRD(context.Background(), cp); err != nil {
			t.Fatal(err)
		}
	}
	k := StartKueue(t, cp, Options{Config: config})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	objects, err := KueueMeaning(s.Policy)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.ApplyKueueObjects(ctx, objects); err != nil {
		t.Fatal(err)
	}
	info, err := ParsePolicy(s.Policy)
	if err != nil {
		t.Fatal(err)
	}
	for _, cq := range info.ClusterQueues {
		if _, err := k.WaitCondition(ctx, ClusterQueueResource, "", cq, "Active", IsTrue, cluster.SettleTimeout); err != nil {
			t.Fatal(err)
		}
	}
	ensureNamespaces(ctx, t, cp, s)
	return &ArmCluster{
		Arm: "kueue", CP: cp, SchedulerName: "default-scheduler",
		Pids: func() map[string]int {
			pids := cp.Pids()
			pids["kueue"] = k.process.Pid()
			return pids
		},
		Config: map[string]string{
			"kueue_release":         kueueRelease,
			"kueue_config":          readText(filepath.Join(k.Dir, "config.yaml")),
			"kueue_policy":          objects,
			"kube_scheduler_config": readText(filepath.Join(cp.Dir, "kube-scheduler-config.yaml")),
		},
		NodesSeen: func(context.Context, testing.TB, int) {},
	}
}

// GpuschedArm is deploy/'s configuration: kube-scheduler's gpusched
// profile with gpusched as its extender and admission webhook, the policy
// as gpusched's --policy file.
type GpuschedArm struct{}

func (GpuschedArm) Name() string { return "gpusched" }

// GpuschedArgs are deploy/'s Deployment's (verbosity 0, the bind
// deadline), over the fixture's.
var GpuschedArgs = []string{"-v", "0", "--bind-deadline-ms=3000"}

func (GpuschedArm) Start(t testing.TB, s *Scenario) *ArmCluster {
	t.Helper()
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(s.Policy), 0o644); err != nil {
		t.Fatal(err)
	}
	cp := controlplane.Start(t, controlplane.Options{
		Webhook: true, Policy: policy, GpuschedArgs: GpuschedArgs,
		KubeletFailsDeletedPods: kubeletFailsDeletedPods,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ensureNamespaces(ctx, t, cp, s)
	if s.Provisioner != nil {
		// deploy/kueue-policy's rules carry the provisioning check's.
		if err := GrantGpuschedKueuePolicy(ctx, cp); err != nil {
			t.Fatal(err)
		}
		if err := InstallProvisioningRequestCRD(ctx, cp); err != nil {
			t.Fatal(err)
		}
		// gpusched started before the CRD and the rules existed: its first
		// list was refused, and it asks a missing API again only every
		// 30 s. The round starts once it has listed the requests, as it
		// would in a cluster where the CRD was there first.
		waitGpuschedListedRequests(ctx, t, cp)
	}
	return &ArmCluster{
		Arm: "gpusched", CP: cp, SchedulerName: cluster.SchedulerName,
		Pids: cp.Pids,
		Config: map[string]string{
			"gpusched_policy":       s.Policy,
			"kube_scheduler_config": readText(filepath.Join(cp.Dir, "kube-scheduler-config.yaml")),
		},
		NodesSeen: func(ctx context.Context, t testing.TB, n int) {
			cluster.WaitGpuschedNodes(ctx, t, cp, n, time.Minute)
		},
	}
}

func ensureNamespaces(ctx context.Context, t testing.TB, cp *controlplane.ControlPlane, s *Scenario) {
	t.Helper()
	for _, ns := range s.Namespaces() {
		if err := controlplane.EnsureNamespace(ctx, cp.Client, ns); err != nil {
			t.Fatal(err)
		}
	}
}

func readText(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return string(data)
}

// SkipUnlessKueueRuns skips (or, with RequireEnv, fails) a test that puts
// a scenario to both arms where the Kueue arm cannot run: binaries of a
// Kubernetes release Kueue's release is not tested on, or no mount
// namespace for its manager. It asks before any control plane starts, so
// that the gpusched arm does not run alone.
func SkipUnlessKueueRuns(t testing.TB) {
	t.Helper()
	repo, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bins, err := controlplane.FindBinaries(repo)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bins.KubeAPIServer, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bins.KubeAPIServer, err)
	}
	var minor int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "Kubernetes v1.%d.", &minor); err != nil {
		t.Fatalf("kube-apiserver --version printed %q: %v", out, err)
	}
	skipUnsupported(t, controlplane.Release{Major: 1, Minor: minor, Version: strings.TrimSpace(string(out))})
}
