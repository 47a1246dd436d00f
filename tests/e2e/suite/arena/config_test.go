package arena

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// shipped is the part of Kueue's ConfigMap the arena changes or keeps.
const shipped = `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health:
  healthProbeBindAddress: :8081
metrics:
  bindAddress: :8443
webhook:
  port: 9443
leaderElection:
  leaderElect: true
  resourceName: c1f6bfd2.kueue.x-k8s.io
integrations:
  frameworks:
  - batch/job
  - pod
`

func TestManagerConfigChangesOnlyWhatLoopbackAndTheTestNeed(t *testing.T) {
	var base map[string]any
	if err := yaml.Unmarshal([]byte(shipped), &base); err != nil {
		t.Fatal(err)
	}
	out, err := managerConfig(base, Config{
		Namespaces:       []string{"e2e"},
		WaitForPodsReady: &WaitForPodsReady{Timeout: 5 * time.Minute},
	}, ports{Health: 1, Metrics: 2, Webhook: 3, Visibility: 4}, "kueue-system", "/certs")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]any{
		"health.healthProbeBindAddress":    "127.0.0.1:1",
		"metrics.bindAddress":              "127.0.0.1:2",
		"webhook.port":                     float64(3),
		"webhook.host":                     "127.0.0.1",
		"webhook.certDir":                  "/certs",
		"visibilityServer.bindPort":        float64(4),
		"leaderElection.leaderElect":       true, // as shipped
		"leaderElection.resourceName":      "c1f6bfd2.kueue.x-k8s.io",
		"leaderElection.resourceNamespace": "kueue-system",
		"internalCertManagement.enable":    false,
		"waitForPodsReady.timeout":         "5m0s",
		"namespace":                        "kueue-system",
	} {
		value, _, _ := unstructured.NestedFieldNoCopy(got, strings.Split(path, ".")...)
		if value != want {
			t.Errorf("%s = %#v, want %#v", path, value, want)
		}
	}
	if _, on := got["fairSharing"]; on {
		t.Error("fairSharing set without Config.FairSharing")
	}
	if _, set := got["clientConnection"]; set {
		t.Error("clientConnection set without Config.ClientQPS")
	}
}

func TestManagerConfigRaisesTheClientLimitWhenAsked(t *testing.T) {
	out, err := managerConfig(map[string]any{}, Config{Namespaces: []string{"e2e"}, Frameworks: []string{"pod"}, ClientQPS: 200},
		ports{}, "kueue-system", "/certs")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	qps, _, _ := unstructured.NestedFieldNoCopy(got, "clientConnection", "qps")
	burst, _, _ := unstructured.NestedFieldNoCopy(got, "clientConnection", "burst")
	if qps != float64(200) || burst != float64(400) {
		t.Errorf("clientConnection qps %v burst %v, want 200, 400", qps, burst)
	}
}

func TestManagerConfigRefusesFrameworksWithoutPod(t *testing.T) {
	base := map[string]any{}
	_, err := managerConfig(base, Config{Namespaces: []string{"e2e"}, Frameworks: []string{"batch/job"}}, ports{}, "kueue-system", "/certs")
	if err == nil || !strings.Contains(err.Error(), `lacks "pod"`) {
		t.Fatalf("err = %v, want one saying the frameworks lack pod", err)
	}
}

func TestPointAtLoopbackRewritesWebhooksAndConversions(t *testing.T) {
	webhooks := &unstructured.Unstructured{Object: map[string]any{
		"kind": "MutatingWebhookConfiguration", "metadata": map[string]any{"name": "m"},
		"webhooks": []any{map[string]any{"name": "mpod.kb.io", "failurePolicy": "Fail",
			"clientConfig": map[string]any{"service": map[string]any{"name": "s", "namespace": "n", "path": "/mutate--v1-pod"}}}},
	}}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "workloads.kueue.x-k8s.io"},
		"spec": map[string]any{"conversion": map[string]any{"strategy": "Webhook", "webhook": map[string]any{
			"clientConfig": map[string]any{"service": map[string]any{"name": "s", "namespace": "n", "path": "/convert"}}}}},
	}}
	plain := &unstructured.Unstructured{Object: map[string]any{
		"kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "topologies.kueue.x-k8s.io"}, "spec": map[string]any{}}}
	if err := pointAtLoopback([]*unstructured.Unstructured{webhooks, crd, plain}, "https://127.0.0.1:9", []byte("CA")); err != nil {
		t.Fatal(err)
	}
	ca := base64.StdEncoding.EncodeToString([]byte("CA"))
	list, _, _ := unstructured.NestedSlice(webhooks.Object, "webhooks")
	hook := list[0].(map[string]any)
	if got := hook["clientConfig"]; got.(map[string]any)["url"] != "https://127.0.0.1:9/mutate--v1-pod" || got.(map[string]any)["caBundle"] != ca {
		t.Errorf("webhook clientConfig = %v", got)
	}
	if hook["failurePolicy"] != "Fail" {
		t.Errorf("failurePolicy = %v, want the release's Fail", hook["failurePolicy"])
	}
	got, _, _ := unstructured.NestedMap(crd.Object, "spec", "conversion", "webhook", "clientConfig")
	if got["url"] != "https://127.0.0.1:9/convert" || got["caBundle"] != ca {
		t.Errorf("conversion clientConfig = %v", got)
	}
	if _, found, _ := unstructured.NestedMap(plain.Object, "spec", "conversion"); found {
		t.Error("a CRD without a conversion webhook got one")
	}
}
