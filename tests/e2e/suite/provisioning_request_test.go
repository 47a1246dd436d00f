package suite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"gpusched.io/e2e/suite/arena"
	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

var provisioningRequests = arena.ProvisioningRequests

// provisioningCheckPolicy: ClusterQueue team-a (32 H100 GPUs, 64 cpu)
// behind AdmissionCheck prov of Kueue's ProvisioningRequest controller,
// retried once after 1 s (backoffLimitCount 1); a provisioned request's
// pods get the node selector gpu.product from its class detail "product".
func provisioningCheckPolicy(t *testing.T) string {
	t.Helper()
	return writeProvisioningCheckPolicy(t, 32, "")
}

// writeProvisioningCheckPolicy: provisioningCheckPolicy with `gpus` GPUs of
// quota and `extra` appended to the ClusterQueue's spec (one indented
// line each).
func writeProvisioningCheckPolicy(t *testing.T, gpus int, extra string) string {
	t.Helper()
	text := fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
spec:
  nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ProvisioningRequestConfig
metadata: {name: prc}
spec:
  provisioningClassName: check-capacity.autoscaling.x-k8s.io
  retryStrategy: {backoffLimitCount: 1, backoffBaseSeconds: 1, backoffMaxSeconds: 1}
  podSetUpdates:
    nodeSelector: [{key: nvidia.com/gpu.product, valueFromProvisioningClassDetail: product}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: prov}
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: prc}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
%s  admissionChecksStrategy:
    admissionChecks: [{name: prov}]
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, cpu]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: %d}
      - {name: cpu, nominalQuota: 64}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: %s}
spec: {clusterQueue: team-a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: low}
value: 10
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
`, extra, gpus, cluster.Namespace)
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// installProvisioningRequestCRD: arena.InstallProvisioningRequestCRD, or
// the test fails.
func installProvisioningRequestCRD(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	if err := arena.InstallProvisioningRequestCRD(ctx, cp); err != nil {
		t.Fatal(err)
	}
}

// provision is the test's provisioner: it waits for request `name` and
// adds its condition `condition`, True, to those it has, as
// cluster-autoscaler would (CapacityRevoked comes on top of Provisioned),
// with `details` as its provisioningClassDetails when not nil.
func provision(ctx context.Context, t *testing.T, client dynamic.Interface, name, condition string, details map[string]any) {
	t.Helper()
	requests := client.Resource(provisioningRequests).Namespace(cluster.Namespace)
	var request *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		request, err = requests.Get(ctx, name, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("ProvisioningRequest %s never created: %v", name, err)
	}
	conditions, _, err := unstructured.NestedSlice(request.Object, "status", "conditions")
	if err != nil {
		t.Fatal(err)
	}
	conditions = append(conditions, map[string]any{"type": condition, "status": "True", "reason": "Test",
		"message": "set by the test provisioner", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)})
	if err := unstructured.SetNestedSlice(request.Object, conditions, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if details != nil {
		if err := unstructured.SetNestedMap(request.Object, details, "status", "provisioningClassDetails"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := requests.UpdateStatus(ctx, request, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("ProvisioningRequest %s: %v", name, err)
	}
}

// waitRequestGone waits until gpusched deleted request `name`.
func waitRequestGone(ctx context.Context, t *testing.T, client dynamic.Interface, name string) {
	t.Helper()
	requests := client.Resource(provisioningRequests).Namespace(cluster.Namespace)
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := requests.Get(ctx, name, metav1.GetOptions{})
		return errors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("ProvisioningRequest %s not deleted: %v", name, err)
	}
}

// waitRequestAbsent checks that request `name` does not exist: none was
// created in the time a retry's backoff (1 s) and the next sync would take.
func waitRequestAbsent(ctx context.Context, t *testing.T, client dynamic.Interface, name, why string) {
	t.Helper()
	time.Sleep(3 * time.Second)
	if _, err := client.Resource(provisioningRequests).Namespace(cluster.Namespace).Get(ctx, name, metav1.GetOptions{}); !errors.IsNotFound(err) {
		t.Errorf("%s: %v, want NotFound: %s", name, err, why)
	}
}

// TestProvisioningRequestCheckGatesTheGang: with Kueue's ProvisioningRequest
// check on the queue, gpusched creates the request for a gang holding its
// quota; Failed is retried with the next attempt's request (the first one
// deleted), Provisioned binds the gang; a gang that fails past
// backoffLimitCount is rejected: no further request, never bound. The
// provisioned gang's pods carry Kueue's podSetUpdates (the request's
// annotations, the config's node selector from the class details). Then
// CapacityRevoked on the bound gang's request deactivates it as Kueue
// v0.19.2 does (provisioning/controller.go: Rejected while active and not
// finished; workload_controller.go reconcileCheckBasedEviction: deactivated
// with reason AdmissionCheck, and Kueue's pod integration deletes a
// deactivated group's pods): its pods are evicted, no new request is made.
func TestProvisioningRequestCheckGatesTheGang(t *testing.T) {
	cp, ctx, client := startWithProvisioningRequests(t, provisioningCheckPolicy(t), 180*time.Second)
	for i := 0; i < 2; i++ {
		if _, err := kueueGangPod("ring", i, 2, 4).Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
	}
	provision(ctx, t, client, "ring-prov-1", "Failed", nil)
	waitRequestGone(ctx, t, client, "ring-prov-1")
	checkNoneBound(ctx, t, cp)
	provision(ctx, t, client, "ring-prov-2", "Provisioned", map[string]any{"product": "NVIDIA-H100-80GB-HBM3"})
	bound := waitAllBound(ctx, t, cp, 2)
	checkGangPlacement(t, bound, 4)
	for _, p := range bound { // Kueue's podSetUpdates, applied with the admission
		if got := p.Annotations["autoscaling.x-k8s.io/consume-provisioning-request"]; got != "ring-prov-2" {
			t.Errorf("%s: consume-provisioning-request %q, want ring-prov-2", p.Name, got)
		}
		if got := p.Spec.NodeSelector["nvidia.com/gpu.product"]; got != "NVIDIA-H100-80GB-HBM3" {
			t.Errorf("%s: nodeSelector gpu.product %q, want the class detail's", p.Name, got)
		}
	}

	for i := 0; i < 2; i++ {
		if _, err := kueueGangPod("doomed", i, 2, 4).Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
	}
	provision(ctx, t, client, "doomed-prov-1", "Failed", nil)
	provision(ctx, t, client, "doomed-prov-2", "Failed", nil)
	waitRequestGone(ctx, t, client, "doomed-prov-2")
	waitRequestAbsent(ctx, t, client, "doomed-prov-3", "a gang past backoffLimitCount is rejected")
	pods, err := cp.Client.CoreV1().Pods(cluster.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := countBound(pods.Items); got != 2 {
		t.Errorf("%d pods bound, want only ring's 2", got)
	}

	provision(ctx, t, client, "ring-prov-2", "CapacityRevoked", nil)
	ring := []string{"ring-0", "ring-1"}
	waitForReason(ctx, t, cp, "Pod", "AdmissionCheck", ring)
	waitForReason(ctx, t, cp, "Pod", "Evicted", ring)
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, name := range ring {
			pod, err := cp.Client.CoreV1().Pods(cluster.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err == nil && pod.DeletionTimestamp == nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Errorf("ring's pods still running 30 s after their capacity was revoked: %v", err)
	}
	waitRequestAbsent(ctx, t, client, "ring-prov-3", "a revoked gang is deactivated, not retried")
}

// TestProvisioningReservationIsPreemptedByAHigherPriorityGang: quota held
// for an admission check takes part in preemption as in Kueue. Gang "low"
// holds all 8 GPUs of the queue while its request is pending; gang "high"
// (higher WorkloadPriorityClass) preempts it on quota alone: low's request
// is deleted and its pods stay gated (nothing of it ran, nothing is
// evicted), high's request is made, and once it is provisioned high is
// bound. Low reserves again, with its check from the start (a new first
// attempt), once high's quota comes back.
func TestProvisioningReservationIsPreemptedByAHigherPriorityGang(t *testing.T) {
	policy := writeProvisioningCheckPolicy(t, 8, "  preemption: {withinClusterQueue: LowerPriority}\n")
	cp, ctx, client := startWithProvisioningRequests(t, policy, 150*time.Second)
	createGang := func(name, priority string) {
		for i := 0; i < 2; i++ {
			pod := kueueGangPod(name, i, 2, 4).Label("kueue.x-k8s.io/priority-class", priority)
			if _, err := pod.Create(ctx, cp.Client); err != nil {
				t.Fatal(err)
			}
		}
	}
	createGang("low", "low")
	waitRequest(ctx, t, client, "low-prov-1")
	createGang("high", "high")
	waitRequestGone(ctx, t, client, "low-prov-1")
	checkNoneBound(ctx, t, cp)
	provision(ctx, t, client, "high-prov-1", "Provisioned", map[string]any{"product": "NVIDIA-H100-80GB-HBM3"})
	for _, p := range waitAllBound(ctx, t, cp, 2) {
		if p.Spec.NodeName != "" && p.Labels["kueue.x-k8s.io/pod-group-name"] != "high" {
			t.Errorf("%s bound, want only high's members", p.Name)
		}
	}
	for _, name := range []string{"low-0", "low-1"} {
		pod, err := cp.Client.CoreV1().Pods(cluster.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil || pod.DeletionTimestamp != nil || len(pod.Spec.SchedulingGates) == 0 {
			t.Errorf("%s: %v, want it still there and gated (a reservation has nothing to evict)", name, err)
		}
	}
	// Its members hear why, as Kueue's Workload gets its Preempted Event.
	waitForReason(ctx, t, cp, "Pod", "Preempted", []string{"low-0", "low-1"})
	// High ends: its quota comes back and low reserves again, attempt 1.
	for _, name := range []string{"high-0", "high-1"} {
		if err := cp.Client.CoreV1().Pods(cluster.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitRequest(ctx, t, client, "low-prov-1")
}

// waitRequest waits until gpusched made request `name`.
func waitRequest(ctx context.Context, t *testing.T, client dynamic.Interface, name string) {
	t.Helper()
	requests := client.Resource(provisioningRequests).Namespace(cluster.Namespace)
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := requests.Get(ctx, name, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("ProvisioningRequest %s never made: %v", name, err)
	}
}

// startWithProvisioningRequests starts a control plane with gpusched on
// `policy`, the ProvisioningRequest CRD and the demo cluster; its context
// ends after `timeout` or with the test.
func startWithProvisioningRequests(t *testing.T, policy string, timeout time.Duration) (*controlplane.ControlPlane, context.Context, dynamic.Interface) {
	t.Helper()
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	client, err := dynamic.NewForConfig(cp.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	allowGpuschedToReadKueueObjects(ctx, t, cp)
	installProvisioningRequestCRD(ctx, t, cp)
	cluster.SetUpDemoCluster(ctx, t, cp)
	return cp, ctx, client
}
