package suite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"gpusched.io/e2e/suite/benchkit"
	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

const (
	// restartNodes: enough nodes that gpusched's list of them lands well
	// after its list of pods (issue 21 reproduced every time with 400).
	restartNodes = 400
	// restartPods single-GPU pods wait admitted but unbound at the kill.
	restartPods = 40
	// Lines gpusched logs when it evicts or revokes an admission
	// (api/kube/eviction.cc, api/controller/decision_writer.cc).
	logEvicted = "kube: evicted pod"
	logRevoked = "revoked pod="
)

// TestKilledGpuschedKeepsAdmittedUnboundPods (issue 21): 400 nodes, and
// kube-scheduler stopped, so that the 40 queued pods gpusched admits
// (gate lifted, pinned to a node, assigned-node written) stay unbound.
// gpusched is killed (-9); kube-scheduler starts again, its filters and
// binds failing while gpusched is down; 3 s later gpusched starts again and
// lists pods before its nodes. It must adopt every admission: no pod is
// deleted, evicted or revoked, each one is bound in the end to the node it
// was admitted on, and no GPU is given twice.
func TestKilledGpuschedKeepsAdmittedUnboundPods(t *testing.T) {
	policy := queuePolicy(t, map[string]int{"team-a": restartPods}, nil)
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	began := time.Now()
	createH100Nodes(ctx, t, cp, "restart-h100", restartNodes)
	cluster.WaitGpuschedNodes(ctx, t, cp, restartNodes, 60*time.Second)
	if err := controlplane.EnsureNamespace(ctx, cp.Client, cluster.Namespace); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d nodes registered and in gpusched's model in %v", restartNodes, time.Since(began).Round(time.Millisecond))

	cp.StopScheduler()
	admitted := createAdmittedUnbound(ctx, t, cp, restartPods)
	watch, err := startPodLossWatch(cp.Client, cluster.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.stop()

	cp.KillGpusched()
	cp.StartScheduler()
	time.Sleep(3 * time.Second)
	restarted := time.Now()
	cp.StartGpusched()
	t.Logf("gpusched after the restart: %q", lastRunLines(t, filepath.Join(cp.Dir, "gpusched.log"), "kube sync:"))

	pods := restartWaitBound(ctx, t, cp, watch, 60*time.Second)
	t.Logf("all %d pods bound %v after gpusched's restart", restartPods, time.Since(restarted).Round(time.Millisecond))
	restartCheckBoundWhereAdmitted(t, admitted, pods)
	faultCheckLedger(ctx, t, cp.Client)
	restartCheckNoEviction(t, cp)
}

// createH100Nodes registers n copies of the demo's dgx-h100-2 (8 H100, the
// flavor queuePolicy covers) named <prefix>-<i>, from 8 workers.
func createH100Nodes(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, prefix string, n int) []corev1.Node {
	t.Helper()
	demo, err := cluster.DemoNodes(cp.Repo)
	if err != nil {
		t.Fatal(err)
	}
	template := cluster.NodeNamed(demo, "dgx-h100-2")
	if template == nil {
		t.Fatalf("%s has no node dgx-h100-2", cluster.DemoClusterFile)
	}
	nodes := make([]corev1.Node, n)
	err = cluster.Parallel(n, 8, func(i int) error {
		node := benchkit.NodeCopy(template, i)
		node.Name = fmt.Sprintf("%s-%03d", prefix, i)
		node.Labels[cluster.HostnameLabel] = node.Name
		created, err := cluster.CreateNode(ctx, cp.Client, &node)
		if err == nil {
			nodes[i] = *created
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

// createAdmittedUnbound creates n single-GPU pods in queue team-a, each
// gated by the webhook, and waits until gpusched has admitted every one
// (admitted label, assigned-node, gate lifted, pinned to that node) while
// none is bound (kube-scheduler is stopped). It returns them by name.
func createAdmittedUnbound(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, n int) map[string]corev1.Pod {
	t.Helper()
	for i := range n {
		pod, err := cluster.GpuPod(fmt.Sprintf("admitted-%02d", i), 1).
			Label("kueue.x-k8s.io/queue-name", "team-a").Create(ctx, cp.Client)
		if err != nil {
			t.Fatal(err)
		}
		if gates := gateNames(pod); len(gates) != 1 || gates[0] != controlplane.WebhookGate {
			t.Fatalf("%s created with gates %v, want [%s]: the webhook did not gate it", pod.Name, gates, controlplane.WebhookGate)
		}
	}
	began := time.Now()
	var waiting, bound []string
	pods, err := cluster.WaitForPods(ctx, cp.Client, cluster.Namespace, func(pods []corev1.Pod) bool {
		waiting, bound = nil, nil
		for i := range pods {
			if cluster.Bound(&pods[i]) {
				bound = append(bound, pods[i].Name+" on "+pods[i].Spec.NodeName)
			} else if !admittedAndPinned(&pods[i]) {
				waiting = append(waiting, pods[i].Name)
			}
		}
		return len(bound) > 0 || (len(pods) == n && len(waiting) == 0)
	}, 60*time.Second)
	if len(bound) > 0 {
		t.Fatalf("bound while kube-scheduler is stopped: %v", bound)
	}
	if err != nil {
		t.Fatalf("not admitted by gpusched: %v: %v", waiting, err)
	}
	t.Logf("%d pods admitted and unbound %v after the last was created", n, time.Since(began).Round(time.Millisecond))
	byName := map[string]corev1.Pod{}
	for _, p := range pods {
		byName[p.Name] = p
	}
	return byName
}

// admittedAndPinned: gpusched's admission of the pod is written whole.
func admittedAndPinned(p *corev1.Pod) bool {
	node := p.Annotations["gpusched.io/assigned-node"]
	return node != "" && p.Labels["gpusched.io/admitted"] == "true" &&
		len(p.Spec.SchedulingGates) == 0 && pinnedByAffinity(p) == node
}

// pinnedByAffinity is the node a required node affinity term pins the pod
// to (matchFields metadata.name In [node]), or "".
func pinnedByAffinity(p *corev1.Pod) string {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

// restartWaitBound waits until every pod is bound. A lost pod never comes
// back: at the first loss it waits 3 s more, to count them all, and fails.
func restartWaitBound(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, watch *podLossWatch, timeout time.Duration) []corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if len(watch.Losses()) > 0 {
			time.Sleep(3 * time.Second)
			losses := watch.Losses()
			t.Fatalf("%d of %d admitted pods lost after gpusched's restart:\n  %s\ngpusched's log:\n  %s",
				len(losses), restartPods, strings.Join(lossTexts(losses), "\n  "), strings.Join(restartLogLines(t, cp, 6), "\n  "))
		}
		pods := watch.Pods()
		if len(pods) == restartPods && countBound(pods) == restartPods {
			return pods
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("%d of %d pods bound %v after gpusched's restart", countBound(pods), restartPods, timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// restartCheckBoundWhereAdmitted: each pod is the one admitted before the
// kill (same UID) and is bound to the node it was admitted on.
func restartCheckBoundWhereAdmitted(t *testing.T, admitted map[string]corev1.Pod, pods []corev1.Pod) {
	t.Helper()
	for _, p := range pods {
		before, ok := admitted[p.Name]
		switch {
		case !ok:
			t.Errorf("pod %s appeared after the kill", p.Name)
		case p.UID != before.UID:
			t.Errorf("pod %s has UID %s, had %s before the kill", p.Name, p.UID, before.UID)
		case p.Spec.NodeName != before.Annotations["gpusched.io/assigned-node"]:
			t.Errorf("pod %s bound to %s, admitted on %s", p.Name, p.Spec.NodeName, before.Annotations["gpusched.io/assigned-node"])
		}
	}
}

// restartCheckNoEviction: gpusched's log (every run) has no eviction or
// revocation.
func restartCheckNoEviction(t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	if lines := restartLogLines(t, cp, 6); len(lines) > 0 {
		t.Errorf("gpusched evicted or revoked pods:\n  %s", strings.Join(lines, "\n  "))
	}
}

// restartLogLines returns the first max of gpusched's eviction and
// revocation lines (every run, in order) and a count of them all.
func restartLogLines(t *testing.T, cp *controlplane.ControlPlane, max int) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(cp.Dir, "gpusched.log"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	evicted, revoked := 0, 0
	for _, line := range strings.Split(string(data), "\n") {
		e, r := strings.Contains(line, logEvicted), strings.Contains(line, logRevoked)
		if e {
			evicted++
		}
		if r {
			revoked++
		}
		if (e || r) && len(lines) < max {
			lines = append(lines, line)
		}
	}
	if evicted+revoked > 0 {
		lines = append(lines, fmt.Sprintf("(%d %q and %d %q lines in all)", evicted, logEvicted, revoked, logRevoked))
	}
	return lines
}

// lastRunLines returns the lines of a component log containing s, from its
// last run (after the last "=== " header the fixture writes at each start).
func lastRunLines(t *testing.T, path, s string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if i := strings.LastIndex(text, "\n=== "); i >= 0 {
		text = text[i:]
	}
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}
