package suite_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
	cp := controlplane.Start(t, controlplane.Options{NoScheduler: true, NoGpusched: true, NoKubelet: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rendered, err := cp.Kubectl(ctx, "kustomize", filepath.Join(cp.Repo, "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	// The namespace exists already (the fixture applied deploy/'s RBAC),
	// as a server-side dry run of namespaced objects needs.
	file := filepath.Join(cp.Dir, "deploy-rendered.yaml")
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
	applied := strings.Fields(string(out))
	if len(applied) != len(objects) {
		t.Fatalf("dry run accepted %d objects, kustomize rendered %d:\n%s", len(applied), len(objects), out)
	}
	checkDeployment(t, objects)
	checkExtenderRole(t, objects)
	checkSchedulerConfigMap(t, cp.Repo, objects)
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
		case "kube-scheduler":
			if !strings.HasSuffix(c.Image, ":"+release) {
				t.Errorf("kube-scheduler image %s: want the pinned %s", c.Image, release)
			}
		}
	}
}

// ClusterRole gpusched grants exactly what gpusched's code calls; the other
// tests fail on a 403 when it grants too little.
func checkExtenderRole(t *testing.T, objects []*unstructured.Unstructured) {
	t.Helper()
	var role rbacv1.ClusterRole
	find(t, objects, "ClusterRole", "gpusched", &role)
	want := map[string][]string{
		"nodes":        {"list", "watch"},
		"pods":         {"get", "list", "patch", "watch"},
		"pods/binding": {"create"},
		"pods/status":  {"patch"},
	}
	got := map[string][]string{}
	for _, rule := range role.Rules {
		for _, resource := range rule.Resources {
			got[resource] = append(got[resource], rule.Verbs...)
		}
	}
	for resource, verbs := range got {
		slices.Sort(verbs)
		if !slices.Equal(verbs, want[resource]) {
			t.Errorf("ClusterRole gpusched: %s: verbs %v, want %v", resource, verbs, want[resource])
		}
	}
	if len(got) != len(want) {
		t.Errorf("ClusterRole gpusched covers %v, want exactly %v", keys(got), keys(want))
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
