package suite_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/browser"
	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

const (
	dashNamespace = "dash"
	dashGang      = "gang"
	dashViewer    = "alice"
	dashPage      = "/apis/visibility.gpusched.io/v1alpha1/dashboard/"
)

// The pending row and the decision row of a workload, as the page marks
// them for tests.
func pendingRowCode(ns, name string) string {
	return fmt.Sprintf(`(document.querySelector('#pending tr[data-workload="%s/%s"]') || {dataset: {}}).dataset.reasonCode || ""`, ns, name)
}

func admittedRow(ns, name string) string {
	return fmt.Sprintf(`!document.querySelector('#pending tr[data-workload="%s/%s"]') && `+
		`!!document.querySelector('#decisions tr[data-decision="Admitted"][data-workload="%s/%s"]')`, ns, name, ns, name)
}

// TestDashboardFollowsAGangUntilItIsAdmitted (issue H section 5): the web
// dashboard in a real headless Chromium, opened through kube-apiserver as
// people open it (kubectl proxy, the aggregated API). A ClusterQueue of
// two GPUs is full with a running pod and a two-pod gang waits. The
// admin's page draws the GPU map and lists the gang with the reason code
// of its Events; a namespace viewer's page lists it too and says they may
// not see the cluster-wide GPU map (403) instead of failing; once the
// running pod is deleted the admin's page, polling, shows the gang
// admitted. Neither page writes an error to the console (the viewer's
// expected 403s aside), and screenshots are kept as artifacts.
func TestDashboardFollowsAGangUntilItIsAdmitted(t *testing.T) {
	chromium := browser.Chromium(t)
	policy := writePolicy(t, cluster.KueuePolicy{Queues: []cluster.ClusterQueue{{
		Name: "dash", GPUs: 2, CPUs: 64,
		LocalQueues: []cluster.LocalQueue{{Namespace: dashNamespace, Name: visLocalQueue}},
	}}})
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Visibility: true, Policy: policy})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	if err := controlplane.EnsureNamespace(ctx, cp.Client, dashNamespace); err != nil {
		t.Fatal(err)
	}
	_, err := cluster.NewPod(dashNamespace, "holder").SchedulerName(cluster.SchedulerName).Gpus(2).
		Label(queueLabel, visLocalQueue).Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.WaitBound(ctx, cp.Client, dashNamespace, "holder", cluster.BindTimeout); err != nil {
		t.Fatal(err)
	}
	createTeamGang(ctx, t, cp, dashNamespace, dashGang)
	reason := latestPodEventReason(ctx, t, cp, dashNamespace, dashGang+"-0", "WaitingForQuota")
	bindNamespaceViewer(ctx, t, cp, dashNamespace, dashViewer)

	chrome := browser.Start(t, chromium)
	admin := browser.Open(t, chrome, cp.KubectlProxy()+dashPage)
	code := browser.Until[string](t, admin, 60*time.Second, "the gang's pending row", pendingRowCode(dashNamespace, dashGang))
	if code != reason {
		t.Errorf("the dashboard shows %s/%s with reason code %q, its Events say %q", dashNamespace, dashGang, code, reason)
	}
	checkAdminPage(t, admin)
	browser.Screenshot(t, admin, cp.ArtifactPath("dashboard-waiting.png"), false)

	viewer := browser.Open(t, chrome, cp.KubectlProxy("--as="+dashViewer, "--as-group=system:authenticated")+
		"/apis/visibility.gpusched.io/v1alpha1/namespaces/"+dashNamespace+"/dashboard/")
	checkViewerPage(t, viewer, reason)

	if err := cp.Client.CoreV1().Pods(dashNamespace).Delete(ctx, "holder", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	browser.Until[bool](t, admin, 60*time.Second, "the gang admitted", admittedRow(dashNamespace, dashGang))
	browser.Screenshot(t, admin, cp.ArtifactPath("dashboard-admitted.png"), false)
	t.Logf("screenshots: %s, dashboard-admitted.png", cp.ArtifactPath("dashboard-waiting.png"))
	if errors := admin.Errors(); len(errors) > 0 {
		t.Errorf("the admin's page wrote to its console:\n%s", strings.Join(errors, "\n"))
	}
	if errors := viewer.Errors("status of 403"); len(errors) > 0 {
		t.Errorf("the viewer's page wrote to its console:\n%s", strings.Join(errors, "\n"))
	}
}

// checkAdminPage: the map is drawn (every demo node) and names a cell
// under the pointer, the quota bars name the ClusterQueue, and no panel
// says it could not read its data.
func checkAdminPage(t *testing.T, page *browser.Page) {
	t.Helper()
	summary := browser.Eval[string](t, page, `document.getElementById('map-summary').textContent`)
	if !strings.HasPrefix(summary, "12 nodes") {
		t.Errorf("GPU map summary %q, want the 12 demo nodes", summary)
	}
	quota := browser.Eval[string](t, page, `document.getElementById('quota').textContent`)
	if !strings.Contains(quota, "dash") || !strings.Contains(quota, "nvidia.com/gpu") {
		t.Errorf("quota panel %q, want ClusterQueue dash's GPU quota", quota)
	}
	// The first node's first GPU: one listener on the canvas names it.
	at := browser.Eval[[]float64](t, page,
		`(() => { const r = document.getElementById('map').getBoundingClientRect(); return [r.left + 12, r.top + 28]; })()`)
	browser.Hover(t, page, at[0], at[1])
	tip := browser.Until[string](t, page, 5*time.Second, "the map's tooltip",
		`!document.getElementById('map-tip').hidden && document.getElementById('map-tip').textContent`)
	if !strings.HasPrefix(tip, "a100-mig-0") || !strings.Contains(tip, "GPU 0") {
		t.Errorf("hovering the first cell shows %q, want a100-mig-0's GPU 0", tip)
	}
	notes := browser.Eval[string](t, page,
		`[...document.querySelectorAll('.note')].filter((n) => !n.hidden).map((n) => n.textContent).join(' | ')`)
	if notes != "" {
		t.Errorf("the admin's page has notes: %s", notes)
	}
}

// checkViewerPage: the namespace's page lists its gang with the same code,
// and says, rather than fails, that the GPU map is not theirs to see.
func checkViewerPage(t *testing.T, page *browser.Page, reason string) {
	t.Helper()
	code := browser.Until[string](t, page, 30*time.Second, "the gang's pending row (viewer)", pendingRowCode(dashNamespace, dashGang))
	if code != reason {
		t.Errorf("the viewer's dashboard shows reason code %q, the Events %q", code, reason)
	}
	note := browser.Eval[string](t, page, `document.getElementById('map-note').textContent`)
	if !strings.Contains(note, "You may not see the GPU map") || !strings.Contains(note, "403") {
		t.Errorf("the viewer's map note is %q, want that they may not see it (403)", note)
	}
}
