package suite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// Issue K §1: quota is never bypassed through DRA. A claim quota cannot
// count (a DeviceClass no mapping names, allocationMode All) makes its
// workload inadmissible, as Kueue's DRA integration does: it waits, gated,
// in a queue with free quota and free devices, and each pod has an Event
// naming the field. A claim whose template is not there yet waits for it,
// and is admitted and bound once it is.

// unmappedClass selects the same GPUs as gpu.nvidia.com, so that devices
// are free for it: only quota can keep its claims off.
const unmappedClass = "gpu-unmetered.example.com"

// admissionGate is gpusched's scheduling gate: on until a pod is admitted.
const admissionGate = "gpusched.io/admission"

func TestDraClaimsQuotaCannotCountAreNeverAdmitted(t *testing.T) {
	policy := queuePolicy(t, map[string]int{"team-a": 8}, nil)
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy,
		ControllerManager: &controlplane.ControllerManager{Controllers: []string{"resourceclaim-controller"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cluster.SetUpDraCluster(ctx, t, cp, draNodes[0])
	class := cluster.NvidiaGpuDeviceClass()
	class.Name, class.Spec.ExtendedResourceName = unmappedClass, nil
	if _, err := cp.Client.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	all := cluster.GpuClaimTemplate("every-gpu", 1)
	all.Spec.Spec.Devices.Requests[0].Exactly.AllocationMode = resourcev1.DeviceAllocationModeAll
	all.Spec.Spec.Devices.Requests[0].Exactly.Count = 0
	createClaimTemplates(ctx, t, cp, all, cluster.ClaimTemplate("unmetered", unmappedClass, 2))
	waitGpuschedOffers(ctx, t, cp, map[string]int{draNodes[0]: 8}, 8)

	queued := func(name, template string) *cluster.PodBuilder {
		return cluster.NewPod(cluster.Namespace, name).SchedulerName(cluster.SchedulerName).
			Label(cluster.QueueLabel, "team-a").ClaimFromTemplate(draPodClaim, template)
	}
	createPending(ctx, t, cp, queued("unmetered", "unmetered"))
	createPending(ctx, t, cp, queued("every-gpu", "every-gpu"))
	waitForReason(ctx, t, cp, "Pod", "Inadmissible", []string{"unmetered", "every-gpu"})
	events := gpuschedEvents(ctx, t, cp)
	checkEventNames(t, events["unmetered"], "Inadmissible",
		"devices.requests[0].exactly.deviceClassName", unmappedClass)
	checkEventNames(t, events["every-gpu"], "Inadmissible",
		"devices.requests[0].exactly.allocationMode", `"All"`)
	for _, name := range []string{"unmetered", "every-gpu"} {
		holdUnbound(ctx, t, cp, name, 3*time.Second)
		checkStillGated(ctx, t, cp, name)
	}
	waitQueueGpus(ctx, t, cp, "team-a", 0)

	// A template that does not exist yet: the pod waits for it, then runs.
	createPending(ctx, t, cp, queued("early", "late-template"))
	waitForReason(ctx, t, cp, "Pod", "WaitingForResourceClaim", []string{"early"})
	holdUnbound(ctx, t, cp, "early", 2*time.Second)
	createClaimTemplates(ctx, t, cp, cluster.GpuClaimTemplate("late-template", 2))
	if _, err := cluster.WaitBound(ctx, cp.Client, cluster.Namespace, "early", 60*time.Second); err != nil {
		t.Fatal(err)
	}
	waitQueueGpus(ctx, t, cp, "team-a", 2)
	checkStillGated(ctx, t, cp, "unmetered")
	checkNoForbidden(t, cp)
}

// checkEventNames: one of the events has `reason` and a note holding every
// part of `names` (the field path, the value).
func checkEventNames(t *testing.T, events []eventsv1.Event, reason string, names ...string) {
	t.Helper()
	for _, e := range events {
		if e.Reason != reason {
			continue
		}
		missing := false
		for _, name := range names {
			missing = missing || !strings.Contains(e.Note, name)
		}
		if !missing {
			return
		}
	}
	var notes []string
	for _, e := range events {
		notes = append(notes, e.Reason+": "+e.Note)
	}
	t.Fatalf("no %s Event naming %q; Events: %q", reason, names, notes)
}

// checkStillGated: the pod was never admitted (gpusched's gate is on).
func checkStillGated(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string) {
	t.Helper()
	pod, err := cp.Client.CoreV1().Pods(cluster.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasGate(pod, admissionGate) {
		t.Fatalf("%s lost gpusched's gate (admitted): gates %v", name, pod.Spec.SchedulingGates)
	}
}

func hasGate(pod *corev1.Pod, gate string) bool {
	for _, g := range pod.Spec.SchedulingGates {
		if g.Name == gate {
			return true
		}
	}
	return false
}
