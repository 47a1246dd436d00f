package suite_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/promtext"
)

// Issue K §4: a PodGroup API whose list keeps failing holds only its own
// gangs. Volcano's CRD here stores v1alpha1 and serves v1beta1 (the version
// gpusched reads) through a conversion webhook that nothing answers, as
// when a webhook's Service is gone: kube-apiserver answers every list of
// v1beta1 PodGroups with a 500, since one PodGroup is stored. A pod outside any
// gang is admitted and bound all the same; the gang's members wait, gated,
// with PodGroupAPIUnavailable; /readyz stays 200 and its body says what is
// degraded, as does gpusched_podgroup_api_list_failing. When the CRD's
// conversion is mended, the gang is bound whole and the notes go.

const volcanoServedAPI = "scheduling.volcano.sh/v1beta1"

// storedOnlyCRD: Volcano's PodGroup CRD serving only its storage version
// v1alpha1, which gpusched does not read.
const storedOnlyCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: podgroups.scheduling.volcano.sh}
spec:
  group: scheduling.volcano.sh
  scope: Namespaced
  names: {kind: PodGroup, plural: podgroups, singular: podgroup, listKind: PodGroupList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

func TestBrokenPodGroupConversionHoldsOnlyItsGangs(t *testing.T) {
	cp, client := startPodGroupPlane(t, writeGangPolicy(t))
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	// The group exists before v1beta1 is served, so that gpusched's first
	// list of v1beta1 already has one to convert.
	stored := volcanoAPI
	stored.version = "v1alpha1"
	installCRD(ctx, t, client, storedOnlyCRD, stored)
	createPodGroup(ctx, t, client, stored, "ring", 4)
	serveThroughDeadWebhook(ctx, t, client)
	var members []string
	for i := 0; i < 4; i++ {
		b := cluster.NewPod(cluster.Namespace, fmt.Sprintf("ring-%d", i)).SchedulerName(cluster.SchedulerName).
			Label(cluster.QueueLabel, "q").Gpus(4)
		members = append(members, createPending(ctx, t, cp, volcanoAPI.memberOf(b, "ring")))
	}
	solo := createPending(ctx, t, cp, cluster.NewPod(cluster.Namespace, "solo").
		SchedulerName(cluster.SchedulerName).Label(cluster.QueueLabel, "q").Gpus(2))

	if _, err := cluster.WaitBound(ctx, cp.Client, cluster.Namespace, solo, 60*time.Second); err != nil {
		t.Fatalf("a pod outside any gang waits while Volcano's PodGroups cannot be listed: %v", err)
	}
	waitForReason(ctx, t, cp, "Pod", "PodGroupAPIUnavailable", members)
	for _, name := range members {
		checkStillGated(ctx, t, cp, name)
	}
	checkDegraded(ctx, t, cp.GpuschedURL, true)
	checkListFailingMetric(t, cp.GpuschedMetrics, 1)

	mendConversion(ctx, t, client)
	waitAllBound(ctx, t, cp, len(members)+1)
	checkDegraded(ctx, t, cp.GpuschedURL, false)
	checkListFailingMetric(t, cp.GpuschedMetrics, 0)
}

// installCRD creates a CRD and waits until api is served.
func installCRD(ctx context.Context, t *testing.T, client dynamic.Interface, text string, api podGroupAPI) {
	t.Helper()
	var crd unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(text), &crd.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource(crdResource).Create(ctx, &crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, err := client.Resource(api.resource()).Namespace(cluster.Namespace).List(ctx, metav1.ListOptions{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD not served after 30 s: %v", err)
		}
	}
}

// serveThroughDeadWebhook adds v1beta1 to the CRD, converted from the
// stored v1alpha1 by a webhook at a port nothing listens on.
func serveThroughDeadWebhook(ctx context.Context, t *testing.T, client dynamic.Interface) {
	t.Helper()
	updateCRD(ctx, t, client, func(crd *unstructured.Unstructured) error {
		versions, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
		if err != nil || len(versions) != 1 {
			return fmt.Errorf("versions %v: %v", versions, err)
		}
		served := runtime.DeepCopyJSONValue(versions[0]).(map[string]any)
		served["name"], served["storage"] = "v1beta1", false
		if err := unstructured.SetNestedSlice(crd.Object, append(versions, served), "spec", "versions"); err != nil {
			return err
		}
		return unstructured.SetNestedMap(crd.Object, map[string]any{
			"strategy": "Webhook",
			"webhook": map[string]any{
				"conversionReviewVersions": []any{"v1"},
				"clientConfig":             map[string]any{"url": "https://127.0.0.1:1/convert"},
			},
		}, "spec", "conversion")
	})
}

func updateCRD(ctx context.Context, t *testing.T, client dynamic.Interface, change func(*unstructured.Unstructured) error) {
	t.Helper()
	crd, err := client.Resource(crdResource).Get(ctx, "podgroups.scheduling.volcano.sh", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := change(crd); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource(crdResource).Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update the CRD: %v", err)
	}
}

// mendConversion sets the CRD's conversion to None: the versions share a
// schema, so kube-apiserver only rewrites apiVersion.
func mendConversion(ctx context.Context, t *testing.T, client dynamic.Interface) {
	t.Helper()
	updateCRD(ctx, t, client, func(crd *unstructured.Unstructured) error {
		return unstructured.SetNestedMap(crd.Object, map[string]any{"strategy": "None"}, "spec", "conversion")
	})
}

// checkDegraded: /readyz answers 200 either way; its body names the
// failing API while it fails, and nothing once it lists again.
func checkDegraded(ctx context.Context, t *testing.T, gpuschedURL string, want bool) {
	t.Helper()
	var status int
	var body string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var err error
		status, body, err = cluster.GpuschedReadyz(ctx, gpuschedURL)
		if err != nil {
			t.Fatal(err)
		}
		degraded := strings.Contains(body, "degraded: "+volcanoServedAPI)
		if status == http.StatusOK && degraded == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz: %d %q, want 200 with degraded=%v", status, body, want)
		}
	}
	if want && !strings.Contains(body, "PodGroupAPIUnavailable") {
		t.Errorf("/readyz %q does not say what the failure holds", body)
	}
}

func checkListFailingMetric(t *testing.T, metrics func() (string, error), want float64) {
	t.Helper()
	text, err := metrics()
	if err != nil {
		t.Fatal(err)
	}
	got := promtext.Parse(text).Sum("gpusched_podgroup_api_list_failing", map[string]string{"api": volcanoServedAPI})
	if got != want {
		t.Errorf("gpusched_podgroup_api_list_failing{api=%q} = %v, want %v", volcanoServedAPI, got, want)
	}
}
