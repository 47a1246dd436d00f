package suite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

const (
	visibilityPrefix = "/apis/visibility.gpusched.io/v1alpha1"
	visNsA, visNsB   = "vis-a", "vis-b"
	visLocalQueue    = "lq"
	visClusterQueue  = "shared"
	visViewer        = "alice"
)

func localQueuePath(ns string) string {
	return fmt.Sprintf("%s/namespaces/%s/localqueues/%s/pendingworkloads", visibilityPrefix, ns, visLocalQueue)
}

var clusterQueuePath = visibilityPrefix + "/clusterqueues/" + visClusterQueue + "/pendingworkloads"

type pendingSummary struct {
	Kind  string `json:"kind"`
	Items []struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		LocalQueueName         string `json:"localQueueName"`
		PositionInClusterQueue int    `json:"positionInClusterQueue"`
		PositionInLocalQueue   int    `json:"positionInLocalQueue"`
		ReasonCode             string `json:"reasonCode"`
	} `json:"items"`
}

// TestVisibilityAPIThroughTheAggregator: kube-apiserver proxies
// visibility.gpusched.io to gpusched (deploy/'s APIService, its caBundle
// written by gpusched, through an ExternalName Service to loopback).
// Three gangs wait in ClusterQueue shared (one GPU of quota, two-GPU
// gangs): an admin reads them with their positions; a user bound to
// gpusched-visibility-viewer in vis-a only reads vis-a and gets 403 for
// vis-b and the ClusterQueue; kubectl get prints the Table's columns;
// kubectl api-resources lists the resources; gpusched itself refuses a
// caller without the front proxy's certificate and asks kube-apiserver
// about every user (a SubjectAccessReview) before answering.
func TestVisibilityAPIThroughTheAggregator(t *testing.T) {
	policy := writePolicy(t, cluster.KueuePolicy{Queues: []cluster.ClusterQueue{{
		Name: visClusterQueue, GPUs: 1, CPUs: 64,
		LocalQueues: []cluster.LocalQueue{{Namespace: visNsA, Name: visLocalQueue}, {Namespace: visNsB, Name: visLocalQueue}},
	}}})
	cp := controlplane.Start(t, controlplane.Options{Visibility: true, Policy: policy,
		Run: &controlplane.Components{Gpusched: true}})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	for _, ns := range []string{visNsA, visNsB} {
		if err := controlplane.EnsureNamespace(ctx, cp.Client, ns); err != nil {
			t.Fatal(err)
		}
	}
	// A second apart: admission order is by creation time.
	for i, gang := range []struct{ ns, name string }{{visNsA, "a1"}, {visNsB, "b1"}, {visNsA, "a2"}} {
		if i > 0 {
			time.Sleep(1100 * time.Millisecond)
		}
		createVisibilityGang(ctx, t, cp, gang.ns, gang.name)
	}

	all := waitForPending(ctx, t, cp, clusterQueuePath, 3)
	for i, want := range []string{"a1", "b1", "a2"} {
		if got := all.Items[i]; got.Metadata.Name != want || got.PositionInClusterQueue != i {
			t.Errorf("ClusterQueue item %d: %s at %d, want %s at %d", i, got.Metadata.Name, got.PositionInClusterQueue, want, i)
		}
	}
	local := waitForPending(ctx, t, cp, localQueuePath(visNsA), 2)
	for i, want := range []struct {
		name string
		inCQ int
		inLQ int
	}{{"a1", 0, 0}, {"a2", 2, 1}} {
		got := local.Items[i]
		if got.Metadata.Name != want.name || got.Metadata.Namespace != visNsA || got.LocalQueueName != visLocalQueue ||
			got.PositionInClusterQueue != want.inCQ || got.PositionInLocalQueue != want.inLQ || got.ReasonCode == "" {
			t.Errorf("LocalQueue item %d: %+v, want %s at %d in the CQ and %d in the LQ, with a reason code", i, got, want.name, want.inCQ, want.inLQ)
		}
	}

	bindViewer(ctx, t, cp, visNsA)
	checkViewerAccess(ctx, t, cp)
	checkExplain(ctx, t, cp, local.Items[1].ReasonCode)
	checkQueueStatus(ctx, t, cp)
	checkTableAndDiscovery(ctx, t, cp)
	checkFrontProxyIsRequired(t, cp)
}

// createVisibilityGang: two one-GPU pods of a Kueue pod group in the
// namespace's LocalQueue; two GPUs exceed the queue's one, so it waits.
func createVisibilityGang(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, ns, group string) {
	t.Helper()
	for i := 0; i < 2; i++ {
		b := cluster.NewPod(ns, fmt.Sprintf("%s-%d", group, i)).SchedulerName(cluster.SchedulerName).Gpus(1).
			Label(queueLabel, visLocalQueue).
			Label("kueue.x-k8s.io/pod-group-name", group).
			Annotation("kueue.x-k8s.io/pod-group-total-count", "2")
		if _, err := b.Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
	}
}

// waitForPending reads path as the admin until it lists `want` workloads
// (the APIService turns Available once gpusched has written its caBundle).
func waitForPending(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, path string, want int) pendingSummary {
	t.Helper()
	var last string
	for ctx.Err() == nil {
		out, err := cp.Kubectl(ctx, "get", "--raw", path)
		var summary pendingSummary
		if err == nil && json.Unmarshal(out, &summary) == nil && len(summary.Items) == want {
			if summary.Kind != "PendingWorkloadsSummary" {
				t.Errorf("%s: kind %q, want PendingWorkloadsSummary", path, summary.Kind)
			}
			return summary
		}
		last = fmt.Sprintf("%s %v", out, err)
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("%s never listed %d workloads; last: %s", path, want, last)
	return pendingSummary{}
}

// bindViewer binds deploy/'s gpusched-visibility-viewer to the viewer in
// ns (no kube-controller-manager aggregates it into view here).
func bindViewer(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, ns string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "visibility-viewer", Namespace: ns},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole",
			Name: controlplane.VisibilityViewerRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: visViewer}},
	}
	if _, err := cp.Client.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func checkViewerAccess(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	as := []string{"--as=" + visViewer, "--as-group=system:authenticated"}
	// RBAC changes reach the authorizer's cache within moments.
	var out []byte
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if out, err = cp.Kubectl(ctx, append(as, "get", "--raw", localQueuePath(visNsA))...); err == nil {
			break
		}
	}
	var summary pendingSummary
	if err != nil || json.Unmarshal(out, &summary) != nil || len(summary.Items) != 2 {
		t.Errorf("%s as %s: %s %v, want its 2 workloads", localQueuePath(visNsA), visViewer, out, err)
	}
	for _, path := range []string{localQueuePath(visNsB), clusterQueuePath} {
		_, err := cp.Kubectl(ctx, append(as, "get", "--raw", path)...)
		if err == nil || !strings.Contains(err.Error(), "Forbidden") {
			t.Errorf("%s as %s: %v, want Forbidden", path, visViewer, err)
		}
	}
}

func checkTableAndDiscovery(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	out, err := cp.Kubectl(ctx, "get", "localqueues.visibility.gpusched.io", visLocalQueue, "-n", visNsA)
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, want := range []string{"NAME", "POSITION IN CQ", "POSITION IN LQ", "PRIORITY", "REASON", "AGE", "a1", "a2"} {
		if !strings.Contains(text, want) {
			t.Errorf("kubectl get localqueues.visibility.gpusched.io: no %q in\n%s", want, text)
		}
	}
	if strings.Contains(text, "b1") {
		t.Errorf("kubectl get of vis-a's LocalQueue shows vis-b's gang:\n%s", text)
	}
	out, err = cp.Kubectl(ctx, "api-resources", "--api-group=visibility.gpusched.io", "-o", "name")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"clusterqueues.visibility.gpusched.io", "localqueues.visibility.gpusched.io"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("kubectl api-resources: no %s in\n%s", want, out)
		}
	}
}

type explanation struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	State                  string `json:"state"`
	ClusterQueue           string `json:"clusterQueue"`
	PositionInClusterQueue int    `json:"positionInClusterQueue"`
	ReasonCode             string `json:"reasonCode"`
	Quota                  []struct {
		Level    string `json:"level"`
		Resource string `json:"resource"`
		Asks     int    `json:"asks"`
	} `json:"quota"`
	Start *struct {
		Expected      string `json:"expected"`
		UnknownReason string `json:"unknownReason"`
	} `json:"start"`
	Ahead []struct {
		Name string `json:"name"`
	} `json:"ahead"`
	PreemptionDryRun *struct {
		Verdict string `json:"verdict"`
		Summary string `json:"summary"`
	} `json:"preemptionDryRun"`
}

func explainPath(ns, name string) string {
	return fmt.Sprintf("%s/namespaces/%s/workloads/%s/explain", visibilityPrefix, ns, name)
}

// checkExplain: the viewer explains a2 (by a member pod's name): its
// queue, position, quota arithmetic and the reason code its list shows;
// vis-b's b1 ahead of it is counted, not named; the forecast says why no
// start is known (nothing running ends, and two GPUs exceed the quota of
// one); explaining vis-b's b1 is forbidden.
func checkExplain(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, reason string) {
	t.Helper()
	as := []string{"--as=" + visViewer, "--as-group=system:authenticated"}
	var e explanation
	var last string
	for ctx.Err() == nil {
		out, err := cp.Kubectl(ctx, append(as, "get", "--raw", explainPath(visNsA, "a2-1"))...)
		e = explanation{}
		if err == nil && json.Unmarshal(out, &e) == nil && e.Start != nil {
			t.Logf("explain a2-1 as %s:\n%s", visViewer, out)
			break
		}
		last = fmt.Sprintf("%s %v", out, err)
		time.Sleep(500 * time.Millisecond)
	}
	if e.Start == nil {
		t.Fatalf("explain a2 never carried a forecast; last: %s", last)
	}
	if e.Metadata.Name != "a2" || e.State != "Pending" || e.ClusterQueue != visClusterQueue ||
		e.PositionInClusterQueue != 2 || e.ReasonCode != reason {
		t.Errorf("explain a2: %+v, want a2 Pending in %s at 2 with reason %s", e, visClusterQueue, reason)
	}
	asksGpus := false
	for _, level := range e.Quota {
		asksGpus = asksGpus || (level.Level == visClusterQueue && level.Resource == "nvidia.com/gpu" && level.Asks == 2)
	}
	if !asksGpus {
		t.Errorf("explain a2: quota %+v, want %s's level asking 2 nvidia.com/gpu", e.Quota, visClusterQueue)
	}
	if len(e.Ahead) != 2 || e.Ahead[0].Name != "a1" || e.Ahead[1].Name != "" {
		t.Errorf("explain a2: ahead %+v, want a1 named and vis-b's b1 unnamed", e.Ahead)
	}
	if e.Start.Expected != "" || e.Start.UnknownReason == "" {
		t.Errorf("explain a2: start %+v, want unknown with a reason", *e.Start)
	}
	// The dry run: whether preempting could admit it now, and whom or why not.
	if e.PreemptionDryRun == nil || e.PreemptionDryRun.Verdict == "" || e.PreemptionDryRun.Summary == "" {
		t.Errorf("explain a2: preemptionDryRun %+v, want a verdict and its sentence", e.PreemptionDryRun)
	}
	_, err := cp.Kubectl(ctx, append(as, "get", "--raw", explainPath(visNsB, "b1"))...)
	if err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("explain b1 as %s: %v, want Forbidden", visViewer, err)
	}
	_, err = cp.Kubectl(ctx, "get", "--raw", explainPath(visNsA, "nobody"))
	if err == nil || !strings.Contains(err.Error(), "NotFound") {
		t.Errorf("explain of no workload: %v, want NotFound", err)
	}
}

// checkQueueStatus: the admin lists ClusterQueues with their usage; the
// viewer lists vis-a's LocalQueues and may not list ClusterQueues.
func checkQueueStatus(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	out, err := cp.Kubectl(ctx, "get", "--raw", visibilityPrefix+"/clusterqueues")
	var queues struct {
		Kind  string `json:"kind"`
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Status struct {
				PendingWorkloads int `json:"pendingWorkloads"`
				FlavorsUsage     []struct {
					Resources []struct {
						Name    string `json:"name"`
						Nominal int    `json:"nominal"`
					} `json:"resources"`
				} `json:"flavorsUsage"`
			} `json:"status"`
		} `json:"items"`
	}
	if err != nil || json.Unmarshal(out, &queues) != nil || len(queues.Items) != 1 ||
		queues.Items[0].Status.PendingWorkloads != 3 || len(queues.Items[0].Status.FlavorsUsage) == 0 {
		t.Errorf("clusterqueues: %s %v, want %s with 3 pending and its usage", out, err, visClusterQueue)
	}
	as := []string{"--as=" + visViewer, "--as-group=system:authenticated"}
	out, err = cp.Kubectl(ctx, append(as, "get", "--raw", visibilityPrefix+"/namespaces/"+visNsA+"/localqueues")...)
	if err != nil || !strings.Contains(string(out), `"kind":"LocalQueueList"`) || !strings.Contains(string(out), `"pendingWorkloads":2`) {
		t.Errorf("vis-a's localqueues as %s: %s %v, want its LocalQueue with 2 pending", visViewer, out, err)
	}
	if _, err = cp.Kubectl(ctx, append(as, "get", "--raw", visibilityPrefix+"/clusterqueues")...); err == nil ||
		!strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("clusterqueues as %s: %v, want Forbidden", visViewer, err)
	}
}

// Straight to gpusched: no certificate is 401; the front proxy's
// certificate naming the viewer gets what kube-apiserver's review says.
func checkFrontProxyIsRequired(t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	for _, c := range []struct {
		cert bool
		path string
		want int
	}{
		{false, localQueuePath(visNsA), http.StatusUnauthorized},
		{true, localQueuePath(visNsA), http.StatusOK},
		{true, localQueuePath(visNsB), http.StatusForbidden},
		{true, clusterQueuePath, http.StatusForbidden},
	} {
		client, err := cp.FrontProxyClient(c.cert)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest("GET", cp.VisibilityURL()+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Remote-User", visViewer)
		req.Header.Add("X-Remote-Group", "system:authenticated")
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("GET %s (cert %v): %v", c.path, c.cert, err)
			continue
		}
		var status struct{ Kind, Reason string }
		_ = json.NewDecoder(resp.Body).Decode(&status)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET %s (cert %v) straight to gpusched: %d %+v, want %d", c.path, c.cert, resp.StatusCode, status, c.want)
		}
		if c.want != http.StatusOK && status.Kind != "Status" {
			t.Errorf("GET %s (cert %v): body kind %q, want a Status", c.path, c.cert, status.Kind)
		}
	}
}
