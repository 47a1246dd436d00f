package suite_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// TestKubectlGpuschedAsATeamMember (issue H sections 2 and 6): two teams'
// ClusterQueues share a cohort and both are full, so a gang of each
// waits. A member of team A (RBAC in team-a only), logged in through an
// exec credential plugin as EKS, GKE and AKS users are, runs the real
// kubectl, which finds gpusched as its plugin kubectl-gpusched on PATH:
// explain shows their gang's queue, position, quota arithmetic and the
// reason code of its Events; explaining team B's gang is a clear 403;
// queue lists team A's pending workloads and nothing of team B's.
func TestKubectlGpuschedAsATeamMember(t *testing.T) {
	policy := writePolicy(t, cluster.KueuePolicy{Queues: []cluster.ClusterQueue{
		{Name: "team-a", Cohort: "org", GPUs: 2, CPUs: 64,
			LocalQueues: []cluster.LocalQueue{{Namespace: "team-a", Name: visLocalQueue}}},
		{Name: "team-b", Cohort: "org", GPUs: 2, CPUs: 64,
			LocalQueues: []cluster.LocalQueue{{Namespace: "team-b", Name: visLocalQueue}}},
	}})
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Visibility: true, Policy: policy})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	for _, team := range []string{"team-a", "team-b"} {
		if err := controlplane.EnsureNamespace(ctx, cp.Client, team); err != nil {
			t.Fatal(err)
		}
		// Each team fills its own quota, so neither can borrow.
		_, err := cluster.NewPod(team, "running").SchedulerName(cluster.SchedulerName).Gpus(2).
			Label(queueLabel, visLocalQueue).Create(ctx, cp.Client)
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, team := range []string{"team-a", "team-b"} {
		createTeamGang(ctx, t, cp, team, "waiting")
	}
	bindNamespaceViewer(ctx, t, cp, "team-a", controlplane.ViewerUser)
	plugin := newPluginRunner(t, cp)

	out := plugin.runUntil(ctx, t, "ClusterQueue:", "explain", "waiting-0")
	for _, want := range []string{"team-a/waiting", "Pending", "ClusterQueue:", "team-a, position 0",
		"Cohort:", "org", "Quota:", "nvidia.com/gpu", "cohort/org"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl gpusched explain waiting-0: no %q in\n%s", want, out)
		}
	}
	// Events are written when the code changes: the latest is the code now.
	if reason := latestPodEventReason(ctx, t, cp, "team-a", "waiting-0", "WaitingForQuota"); !hasLine(out, "Reason:", reason) {
		t.Errorf("kubectl gpusched explain waiting-0: no Reason line with its Events' %s in\n%s", reason, out)
	}
	t.Logf("kubectl gpusched explain waiting-0:\n%s", out)

	out, err := plugin.run(ctx, "explain", "-n", "team-b", "waiting-0")
	if err == nil || !strings.Contains(out, "Forbidden") || !strings.Contains(out, "gpusched-visibility-viewer") {
		t.Errorf("kubectl gpusched explain -n team-b: %v\n%s\nwant Forbidden naming the role to bind", err, out)
	}

	out = plugin.runUntil(ctx, t, "waiting", "queue")
	if !strings.Contains(out, "POSITION") || strings.Contains(out, "team-b") {
		t.Errorf("kubectl gpusched queue: want team-a's pending workloads only, got\n%s", out)
	}
	t.Logf("kubectl gpusched queue:\n%s", out)
}

// hasLine: a line of text that starts with prefix and ends with value.
func hasLine(text, prefix, value string) bool {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, prefix) && strings.TrimSpace(strings.TrimPrefix(line, prefix)) == value {
			return true
		}
	}
	return false
}

// latestPodEventReason: the reason of gpusched's latest Event on the pod,
// once it is `want` or 10 s have passed.
func latestPodEventReason(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, ns, pod, want string) string {
	t.Helper()
	latest := ""
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		list, err := cp.Client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var at time.Time
		for _, e := range list.Items {
			if e.ReportingController == gpuschedController && e.Regarding.Kind == "Pod" && e.Regarding.Name == pod &&
				!e.EventTime.Time.Before(at) {
				at, latest = e.EventTime.Time, e.Reason
			}
		}
		if latest == want {
			break
		}
	}
	return latest
}

// createTeamGang: two one-GPU pods of a Kueue pod group in the team's
// LocalQueue.
func createTeamGang(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, ns, group string) {
	t.Helper()
	for i := 0; i < 2; i++ {
		_, err := cluster.NewPod(ns, fmt.Sprintf("%s-%d", group, i)).SchedulerName(cluster.SchedulerName).Gpus(1).
			Label(queueLabel, visLocalQueue).
			Label("kueue.x-k8s.io/pod-group-name", group).
			Annotation("kueue.x-k8s.io/pod-group-total-count", "2").
			Create(ctx, cp.Client)
		if err != nil {
			t.Fatal(err)
		}
	}
}

func bindNamespaceViewer(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, ns, user string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "gpusched-visibility-viewer", Namespace: ns},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole",
			Name: controlplane.VisibilityViewerRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if _, err := cp.Client.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// pluginRunner runs the built kubectl with a kubeconfig whose user logs in
// through an exec credential plugin, and PATH leading to a directory
// holding kubectl-gpusched, a symlink to the built gpusched.
type pluginRunner struct {
	kubectl, kubeconfig, path string
}

func newPluginRunner(t *testing.T, cp *controlplane.ControlPlane) pluginRunner {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(cp.Bins.Gpusched, filepath.Join(dir, "kubectl-gpusched")); err != nil {
		t.Fatal(err)
	}
	credential := filepath.Join(dir, "e2e-credential")
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s' '{\"apiVersion\":\"client.authentication.k8s.io/v1\","+
		"\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s\"}}'\n", cp.ViewerToken())
	if err := os.WriteFile(credential, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: viewer
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: %s
      interactiveMode: Never
contexts:
- name: team-a
  context: {cluster: e2e, user: viewer, namespace: team-a}
current-context: team-a
`, cp.APIServerURL, base64.StdEncoding.EncodeToString([]byte(cp.CAPEM())), credential)
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return pluginRunner{kubectl: cp.Bins.Kubectl, kubeconfig: kubeconfig,
		path: dir + string(os.PathListSeparator) + os.Getenv("PATH")}
}

// run: `kubectl gpusched ARGS...`, its stdout and stderr together.
func (p pluginRunner) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, p.kubectl, append([]string{"gpusched"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+p.kubeconfig, "PATH="+p.path)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// runUntil repeats run until it succeeds with `want` in its output (RBAC
// and the first forecast take moments to arrive).
func (p pluginRunner) runUntil(ctx context.Context, t *testing.T, want string, args ...string) string {
	t.Helper()
	var out string
	var err error
	for ctx.Err() == nil {
		if out, err = p.run(ctx, args...); err == nil && strings.Contains(out, want) {
			return out
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("kubectl gpusched %s: %v\n%s", strings.Join(args, " "), err, out)
	return ""
}
