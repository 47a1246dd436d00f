package suite_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	sigsyaml "sigs.k8s.io/yaml"

	"gpusched.io/e2e/suite/controlplane"
)

// TestDeployRendersAndTheAPIServerAcceptsEveryObject renders deploy/ with
// the built kubectl's kustomize, as `kubectl apply -k deploy/` would, and
// has the real API server validate every object (server-side dry run).
func TestDeployRendersAndTheAPIServerAcceptsEveryObject(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{Run: &controlplane.Components{}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rendered, err := cp.Kubectl(ctx, "kustomize", filepath.Join(cp.Repo, "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	// The namespace exists already (the fixture applied deploy/'s RBAC),
	// as a server-side dry run of namespaced objects needs.
	objects := dryRunAcceptsEveryObject(ctx, t, cp, "deploy", rendered)
	checkDeployment(t, objects)
	checkReplicas(t, cp.Repo, objects)
	checkExtenderRole(t, objects)
	checkSchedulerConfigMap(t, cp.Repo, objects)
	checkWebhook(t, objects)
	checkVisibility(t, objects)
}

// dryRunAcceptsEveryObject has the real API server validate every object
// of rendered (multi-document YAML) with a server-side dry run, and
// returns them decoded. The namespaces they live in must exist.
func dryRunAcceptsEveryObject(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, what string, rendered []byte) []*unstructured.Unstructured {
	t.Helper()
	file := filepath.Join(cp.Dir, what+"-rendered.yaml")
	if err := os.WriteFile(file, rendered, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := cp.Kubectl(ctx, "apply", "--dry-run=server", "-f", file, "-o", "name")
	if err != nil {
		t.Fatal(err)
	}
	objects, err := controlplane.DecodeObjects(bytes.NewReader(rendered))
	if err != nil {
		t.Fatal(err)
	}
	if applied := strings.Fields(string(out)); len(applied) != len(objects) {
		t.Fatalf("dry run accepted %d objects, %s rendered %d:\n%s", len(applied), what, len(objects), out)
	}
	return objects
}

// find converts the first rendered object of `kind` whose name starts with
// namePrefix (generated ConfigMaps carry a hash suffix) into `into`.
func find(t *testing.T, objects []*unstructured.Unstructured, kind, namePrefix string, into any) {
	t.Helper()
	for _, o := range objects {
		if o.GetKind() == kind && strings.HasPrefix(o.GetName(), namePrefix) {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("kustomize rendered no %s %s*", kind, namePrefix)
}

// The gpusched container follows the cluster (live mode, in-cluster), and
// kube-scheduler is the release the suite pins.
func checkDeployment(t *testing.T, objects []*unstructured.Unstructured) {
	t.Helper()
	var deployment appsv1.Deployment
	find(t, objects, "Deployment", "gpusched", &deployment)
	release := strings.TrimSpace(readFile(t, filepath.Join("..", "k8s", "RELEASE")))
	for _, c := range deployment.Spec.Template.Spec.Containers {
		switch c.Name {
		case "gpusched":
			if !slices.Contains(c.Args, "--in-cluster") {
				t.Errorf("gpusched container args %v: not in live mode (--in-cluster)", c.Args)
			}
			if !slices.Contains(c.Args, "--webhook-listen=0.0.0.0:9443") {
				t.Errorf("gpusched container args %v: no admission webhook on 9443", c.Args)
			}
			if !slices.Contains(c.Args, "--visibility-listen=0.0.0.0:8443") {
				t.Errorf("gpusched container args %v: no visibility API on 8443", c.Args)
			}
			// Unauthenticated: loopback only, reached by port-forward.
			if !slices.Contains(c.Args, "--dashboard-listen=127.0.0.1:8090") {
				t.Errorf("gpusched container args %v: no loopback dashboard on 127.0.0.1:8090", c.Args)
			}
		case "kube-scheduler":
			if !strings.HasSuffix(c.Image, ":"+release) {
				t.Errorf("kube-scheduler image %s: want the pinned %s", c.Image, release)
			}
		}
	}
}

// checkReplicas: two replicas, and the Lease each gpusched follows is the
// one its kube-scheduler elects on (leaderElection in the scheduler config,
// which must be on).
func checkReplicas(t *testing.T, repo string, objects []*unstructured.Unstructured) {
	t.Helper()
	var deployment appsv1.Deployment
	find(t, objects, "Deployment", "gpusched", &deployment)
	if r := deployment.Spec.Replicas; r == nil || *r != 2 {
		t.Errorf("Deployment replicas %v, want 2", r)
	}
	var config struct {
		LeaderElection struct {
			LeaderElect       bool   `json:"leaderElect"`
			ResourceName      string `json:"resourceName"`
			ResourceNamespace string `json:"resourceNamespace"`
		} `json:"leaderElection"`
	}
	data := readFile(t, filepath.Join(repo, "deploy", "kube-scheduler-config.yaml"))
	if err := sigsyaml.Unmarshal([]byte(data), &config); err != nil {
		t.Fatal(err)
	}
	election := config.LeaderElection
	want := "--leader-lease=" + election.ResourceNamespace + "/" + election.ResourceName
	for _, c := range deployment.Spec.Template.Spec.Containers {
		if c.Name == "gpusched" && (!election.LeaderElect || !slices.Contains(c.Args, want)) {
			t.Errorf("gpusched args %v: want %s, kube-scheduler's Lease (leaderElect %v)", c.Args, want, election.LeaderElect)
		}
	}
}

// ClusterRole gpusched and Role gpusched grant exactly what gpusched's code
// calls; the other tests fail on a 403 when they grant too little. Keys are
// "group/resource"; a verb limited to some names reads "verb[name,...]".
func checkExtenderRole(t *testing.T, objects []*unstructured.Unstructured) {
	t.Helper()
	var clusterRole rbacv1.ClusterRole
	find(t, objects, "ClusterRole", "gpusched", &clusterRole)
	checkRules(t, "ClusterRole gpusched", clusterRole.Rules, map[string][]string{
		"/nodes":                                 {"list", "watch"},
		"/pods":                                  {"get", "list", "patch", "watch"},
		"/pods/binding":                          {"create"},
		"/pods/status":                           {"patch"},
		"/pods/eviction":                         {"create"},
		"events.k8s.io/events":                   {"create"},
		"scheduling.volcano.sh/podgroups":        {"get", "list", "patch", "watch"},
		"scheduling.x-k8s.io/podgroups":          {"get", "list", "watch"},
		"scheduling.volcano.sh/podgroups/status": {"patch"},
		"scheduling.x-k8s.io/podgroups/status":   {"patch"},
		"scheduling.k8s.io/podgroups":            {"list", "watch"},
		"scheduling.k8s.io/podgroups/status":     {"patch"},
		"resource.k8s.io/resourceslices":         {"list", "watch"},
		"resource.k8s.io/deviceclasses":          {"list", "watch"},
		"resource.k8s.io/devicetaintrules":       {"list", "watch"},
		"resource.k8s.io/resourceclaims":         {"list", "watch"},
		"resource.k8s.io/resourceclaimtemplates": {"list", "watch"},
		"admissionregistration.k8s.io/mutatingwebhookconfigurations":   {"get[gpusched]", "list", "patch[gpusched]"},
		"admissionregistration.k8s.io/validatingwebhookconfigurations": {"list"},
		"coordination.k8s.io/leases":                                   {"get[c1f6bfd2.kueue.x-k8s.io]"},
		"apiregistration.k8s.io/apiservices": {
			"get[" + controlplane.VisibilityAPIService + "]", "patch[" + controlplane.VisibilityAPIService + "]"},
		"authorization.k8s.io/subjectaccessreviews": {"create"},
		"apiextensions.k8s.io/customresourcedefinitions": {
			"list[podgroups.scheduling.volcano.sh,podgroups.scheduling.x-k8s.io]",
			"watch[podgroups.scheduling.volcano.sh,podgroups.scheduling.x-k8s.io]"},
	})
	var role rbacv1.Role
	for _, o := range objects {
		if o.GetKind() == "Role" && o.GetName() == "gpusched" && o.GetNamespace() == controlplane.DeployNamespace {
			find(t, []*unstructured.Unstructured{o}, "Role", "gpusched", &role)
		}
	}
	if role.Name == "" {
		t.Fatalf("kustomize rendered no Role %s/gpusched", controlplane.DeployNamespace)
	}
	checkRules(t, "Role gpusched", role.Rules, map[string][]string{
		"/secrets":                   {"create", "get[gpusched-webhook-tls,gpusched-visibility-tls]"},
		"/configmaps":                {"create", "get[gpusched-runtime-history,gpusched-requeue-state]", "patch[gpusched-runtime-history,gpusched-requeue-state]"},
		"coordination.k8s.io/leases": {"list[gpusched]", "watch[gpusched]"},
	})
}

func checkRules(t *testing.T, what string, rules []rbacv1.PolicyRule, want map[string][]string) {
	t.Helper()
	got := map[string][]string{}
	for _, rule := range rules {
		for _, group := range rule.APIGroups {
			for _, resource := range rule.Resources {
				key := group + "/" + resource
				for _, verb := range rule.Verbs {
					if len(rule.ResourceNames) > 0 {
						verb += "[" + strings.Join(rule.ResourceNames, ",") + "]"
					}
					got[key] = append(got[key], verb)
				}
			}
		}
	}
	for resource, verbs := range got {
		slices.Sort(verbs)
		if !slices.Equal(verbs, want[resource]) {
			t.Errorf("%s: %s: verbs %v, want %v", what, resource, verbs, want[resource])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s covers %v, want exactly %v", what, keys(got), keys(want))
	}
}

// The ConfigMap is generated from deploy/kube-scheduler-config.yaml (one
// copy), and no managedResources lets a CPU-only gang member skip gpusched.
func checkSchedulerConfigMap(t *testing.T, repo string, objects []*unstructured.Unstructured) {
	t.Helper()
	var cm corev1.ConfigMap
	find(t, objects, "ConfigMap", "gpusched-scheduler-config", &cm)
	source := readFile(t, filepath.Join(repo, "deploy", "kube-scheduler-config.yaml"))
	if cm.Data["kube-scheduler-config.yaml"] != source {
		t.Errorf("ConfigMap %s differs from deploy/kube-scheduler-config.yaml", cm.Name)
	}
	var config struct {
		Extenders []map[string]any `json:"extenders"`
	}
	if err := sigsyaml.Unmarshal([]byte(source), &config); err != nil {
		t.Fatal(err)
	}
	if len(config.Extenders) != 1 {
		t.Fatalf("want one extender, got %d", len(config.Extenders))
	}
	if _, ok := config.Extenders[0]["managedResources"]; ok {
		t.Errorf("the extender has managedResources: pods without them would bypass gpusched")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func keys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// The webhook is deploy/'s, as the e2e fixture registers it, and may never
// block a pod: failurePolicy Ignore, only gpusched's pods, never the
// namespaces gpusched and the system run in.
func checkWebhook(t *testing.T, objects []*unstructured.Unstructured) {
	t.Helper()
	var config admissionv1.MutatingWebhookConfiguration
	find(t, objects, "MutatingWebhookConfiguration", controlplane.WebhookConfigName, &config)
	if len(config.Webhooks) != 1 {
		t.Fatalf("MutatingWebhookConfiguration %s: %d webhooks, want 1", config.Name, len(config.Webhooks))
	}
	w := config.Webhooks[0]
	if w.FailurePolicy == nil || *w.FailurePolicy != admissionv1.Ignore {
		t.Errorf("webhook %s: failurePolicy %v, want Ignore", w.Name, w.FailurePolicy)
	}
	if s := w.ClientConfig.Service; s == nil || s.Name != "gpusched-webhook" || s.Namespace != controlplane.DeployNamespace ||
		s.Path == nil || *s.Path != "/mutate-pods" || s.Port == nil || *s.Port != 443 {
		t.Errorf("webhook %s: clientConfig.service %+v, want gpusched-webhook.gpusched-system:443/mutate-pods", w.Name, s)
	}
	if len(w.MatchConditions) != 1 || !strings.Contains(w.MatchConditions[0].Expression, "object.spec.schedulerName == 'gpusched'") ||
		!strings.Contains(w.MatchConditions[0].Expression, "'kueue.x-k8s.io/queue-name' in object.metadata.labels") {
		t.Errorf("webhook %s: matchConditions %+v, want the schedulerName check", w.Name, w.MatchConditions)
	}
	if w.NamespaceSelector == nil || len(w.NamespaceSelector.MatchExpressions) != 1 ||
		!slices.Equal(w.NamespaceSelector.MatchExpressions[0].Values, []string{controlplane.DeployNamespace, "kube-system"}) {
		t.Errorf("webhook %s: namespaceSelector %+v, want gpusched-system and kube-system excluded", w.Name, w.NamespaceSelector)
	}
	var service corev1.Service
	find(t, objects, "Service", "gpusched-webhook", &service)
	if len(service.Spec.Ports) != 1 || service.Spec.Ports[0].Port != 443 || service.Spec.Ports[0].TargetPort.String() != "webhook" {
		t.Errorf("Service gpusched-webhook ports %+v, want 443 -> webhook (9443)", service.Spec.Ports)
	}
}

// The APIService routes the group to the gpusched-visibility Service with no
// caBundle (gpusched writes it) and never skips TLS verification; the
// viewer role aggregates into view and reads LocalQueues only.
func checkVisibility(t *testing.T, objects []*unstructured.Unstructured) {
	t.Helper()
	// As unstructured: the suite does not depend on kube-aggregator's types.
	var service *unstructured.Unstructured
	for _, o := range objects {
		if o.GetKind() == "APIService" && o.GetName() == controlplane.VisibilityAPIService {
			service = o
		}
	}
	if service == nil {
		t.Fatalf("kustomize rendered no APIService %s", controlplane.VisibilityAPIService)
	}
	name, _, _ := unstructured.NestedString(service.Object, "spec", "service", "name")
	namespace, _, _ := unstructured.NestedString(service.Object, "spec", "service", "namespace")
	// The decoded YAML holds the number as whatever type it chose.
	port, _, _ := unstructured.NestedFieldNoCopy(service.Object, "spec", "service", "port")
	if name != controlplane.VisibilityService || namespace != controlplane.DeployNamespace || fmt.Sprint(port) != "443" {
		t.Errorf("APIService %s: service %s.%s:%v, want %s.%s:443", service.GetName(), name, namespace, port,
			controlplane.VisibilityService, controlplane.DeployNamespace)
	}
	skip, _, _ := unstructured.NestedBool(service.Object, "spec", "insecureSkipTLSVerify")
	bundle, _, _ := unstructured.NestedString(service.Object, "spec", "caBundle")
	if skip || bundle != "" {
		t.Errorf("APIService %s: insecureSkipTLSVerify %v, caBundle %q; want verification with gpusched's CA, written by gpusched",
			service.GetName(), skip, bundle)
	}
	var viewer rbacv1.ClusterRole
	find(t, objects, "ClusterRole", controlplane.VisibilityViewerRole, &viewer)
	if viewer.Labels["rbac.authorization.k8s.io/aggregate-to-view"] != "true" {
		t.Errorf("ClusterRole %s: labels %v, want aggregate-to-view", viewer.Name, viewer.Labels)
	}
	checkRules(t, "ClusterRole "+viewer.Name, viewer.Rules, map[string][]string{
		"visibility.gpusched.io/localqueues":                  {"get", "list"},
		"visibility.gpusched.io/localqueues/pendingworkloads": {"get"},
		"visibility.gpusched.io/workloads/explain":            {"get"},
		"visibility.gpusched.io/decisions":                    {"list"},
		// kube-apiserver authorizes the dashboard page's path as this
		// resource: list for .../dashboard/, get for each file.
		"visibility.gpusched.io/dashboard": {"get", "list"},
	})
}
