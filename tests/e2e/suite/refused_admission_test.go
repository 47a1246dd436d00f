package suite_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
	"gpusched.io/e2e/suite/promtext"
)

// Issue K §3: a write the cluster refuses never deletes a pod that never
// ran. A ValidatingAdmissionPolicy denies lifting gpusched's gate from pods
// labelled keep-gated; one such pod of 4 GPUs is first in a queue of 4,
// another pod of 4 waits behind it. gpusched's admission of the first is
// refused: it is taken back (never evicted: the pod stays, gated, with an
// Event quoting the refusal), and the second pod is admitted and bound on
// the room it gave back.

const keepGatedLabel = "e2e.gpusched.io/keep-gated"

const keepGatedMessage = "e2e policy keep-gated: the admission gate may not be lifted"

func TestRefusedAdmissionIsTakenBackAndNeverDeletesThePod(t *testing.T) {
	policy := timerPolicy(t, 4, map[string]string{"admissionTimeout": "10s"})
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	denyLiftingTheGate(ctx, t, cp)

	refused := createPending(ctx, t, cp, cluster.GpuPod("refused", 4).
		Label(cluster.QueueLabel, "team-a").Label(keepGatedLabel, "true"))
	waitForReason(ctx, t, cp, "Pod", "AdmissionRefused", []string{refused})
	checkEventNames(t, gpuschedEvents(ctx, t, cp)[refused], "AdmissionRefused", keepGatedMessage)

	second := createPending(ctx, t, cp, cluster.GpuPod("second", 4).Label(cluster.QueueLabel, "team-a"))
	if _, err := cluster.WaitBound(ctx, cp.Client, cluster.Namespace, second, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	// Past the admission timeout and a retry: the refused pod is still
	// there, still gated, never bound, and was never told Admitted.
	holdUnbound(ctx, t, cp, refused, 12*time.Second)
	checkStillGated(ctx, t, cp, refused)
	if hasReason(gpuschedEvents(ctx, t, cp)[refused], "Pod", "Admitted") {
		t.Fatalf("%s was told Admitted although its admission never landed", refused)
	}
	text, err := cp.GpuschedMetrics()
	if err != nil {
		t.Fatal(err)
	}
	if n := promtext.Parse(text).Sum("gpusched_decision_write_failures_total",
		map[string]string{"kind": "admit"}); n < 1 {
		t.Fatalf("gpusched_decision_write_failures_total{kind=admit} = %v, want >= 1", n)
	}
	// The policy's denial says "forbidden"; nothing else may.
	lines, err := cluster.GrepLog(filepath.Join(cp.Dir, controlplane.Gpusched+".log"), "forbidden")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range lines {
		if !strings.Contains(line, "keep-gated") {
			t.Errorf("gpusched.log: a forbidden request beside the policy's denials: %s", line)
		}
	}
}

// denyLiftingTheGate: a ValidatingAdmissionPolicy (and its binding) that
// denies any update taking gpusched's gate off a keep-gated pod, as a
// site's policy engine might.
func denyLiftingTheGate(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	fail := admissionv1.Fail
	vap := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "keep-gated"},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Update},
					Rule: admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
						Resources: []string{"pods"}},
				}}}},
			Validations: []admissionv1.Validation{{
				Expression: "!has(object.metadata.labels) || !('" + keepGatedLabel + "' in object.metadata.labels) || " +
					"(has(object.spec.schedulingGates) && object.spec.schedulingGates.exists(g, g.name == '" +
					admissionGate + "'))",
				Message: keepGatedMessage,
			}},
		},
	}
	policies := cp.Client.AdmissionregistrationV1()
	if _, err := policies.ValidatingAdmissionPolicies().Create(ctx, vap, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "keep-gated"},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "keep-gated",
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	if _, err := policies.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The policy is enforced once kube-apiserver's informer has it: wait
	// until an update it must deny is denied.
	probe, err := cluster.GpuPod("vap-probe", 0).Label(keepGatedLabel, "true").
		SchedulingGate(admissionGate).Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		p, err := cp.Client.CoreV1().Pods(cluster.Namespace).Get(ctx, probe.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Spec.SchedulingGates = nil
		if _, err = cp.Client.CoreV1().Pods(cluster.Namespace).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			break // denied: the policy is in force
		}
		if time.Now().After(deadline) {
			t.Fatal("the ValidatingAdmissionPolicy keep-gated was not enforced within 30 s")
		}
		// The probe lost its gate: make a new one.
		if probe, err = cluster.GpuPod(probe.Name+"x", 0).Label(keepGatedLabel, "true").
			SchedulingGate(admissionGate).Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
	}
}
