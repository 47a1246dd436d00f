package suite_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// "Why is it pending?" has one answer everywhere: the reason code gpusched
// gives a waiting gang shows as an Event on each of its pods and on its
// PodGroup, and in the PodGroup's status; a new Event comes only with a new
// code, never one per admission pass.

const gpuschedController = "gpusched.io/scheduler"

// maxEventsPerObject: a gang that waits for quota and is then admitted
// goes through a few codes (GangIncomplete while its pods arrive,
// WaitingForQuota, Admitted); more would be a storm.
const maxEventsPerObject = 5

// gpuschedEvents lists gpusched's events.k8s.io/v1 Events in the test
// namespace by the name of the object they are about.
func gpuschedEvents(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) map[string][]eventsv1.Event {
	t.Helper()
	list, err := cp.Client.EventsV1().Events(cluster.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]eventsv1.Event{}
	for _, e := range list.Items {
		if e.ReportingController == gpuschedController {
			out[e.Regarding.Name] = append(out[e.Regarding.Name], e)
		}
	}
	return out
}

func hasReason(events []eventsv1.Event, kind, reason string) bool {
	for _, e := range events {
		if e.Regarding.Kind == kind && e.Reason == reason {
			return true
		}
	}
	return false
}

// waitForReason waits until every object of `names` (of `kind`) carries a
// gpusched Event with `reason`.
func waitForReason(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, kind, reason string, names []string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		events := gpuschedEvents(ctx, t, cp)
		missing := []string{}
		for _, name := range names {
			if !hasReason(events[name], kind, reason) {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no gpusched %s Event %s on %v after 30 s", kind, reason, missing)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// volcanoMembers lists the pods that name Volcano PodGroup `group`.
func volcanoMembers(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, group string) []corev1.Pod {
	t.Helper()
	list, err := cp.Client.CoreV1().Pods(cluster.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.Annotations["scheduling.k8s.io/group-name"] == group {
			out = append(out, p)
		}
	}
	return out
}

func volcanoGroupStatus(ctx context.Context, t *testing.T, client dynamic.Interface, name string) map[string]any {
	t.Helper()
	group, err := client.Resource(volcanoAPI.resource()).Namespace(cluster.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status, _, _ := unstructured.NestedMap(group.Object, "status")
	return status
}

// waitGroupPhase waits until the Volcano PodGroup's status.phase is `phase`.
func waitGroupPhase(ctx context.Context, t *testing.T, client dynamic.Interface, name, phase string, timeout time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		status := volcanoGroupStatus(ctx, t, client, name)
		if status["phase"] == phase {
			return status
		}
		if time.Now().After(deadline) {
			t.Fatalf("PodGroup %s: status %v after %v, want phase %s", name, status, timeout, phase)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkUnschedulableBecause: the status carries condition Unschedulable
// with the code as reason and the sentence (its numbers) as message.
func checkUnschedulableBecause(t *testing.T, status map[string]any, reason, sentence string) {
	t.Helper()
	conditions, _ := status["conditions"].([]any)
	for _, c := range conditions {
		cond, _ := c.(map[string]any)
		if cond["type"] != "Unschedulable" {
			continue
		}
		message, _ := cond["message"].(string)
		if cond["status"] != "True" || cond["reason"] != reason || !strings.Contains(message, sentence) {
			t.Errorf("condition Unschedulable %v: want True, reason %s, message with %q", cond, reason, sentence)
		}
		return
	}
	t.Errorf("PodGroup status %v: no Unschedulable condition", status)
}

// TestWaitingPodGroupGangSaysWhyOnItsPodsAndPodGroup: a queue of 16 GPUs
// runs a Kueue gang of 4 x 4; a Volcano PodGroup gang of 4 x 4 in the same
// queue waits for quota. Its pods and PodGroup carry a gpusched Event
// WaitingForQuota, and the PodGroup is Pending and Unschedulable for that
// reason. Once the running gang's pods succeed, the waiting gang is bound
// and its PodGroup is Running. No object gets more than a handful of Events.
func TestWaitingPodGroupGangSaysWhyOnItsPodsAndPodGroup(t *testing.T) {
	policy := queuePolicy(t, map[string]int{"team-a": 16}, nil)
	cp, client := startPodGroupPlane(t, policy)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	installPodGroupCRD(ctx, t, client, volcanoAPI)
	cluster.SetUpDemoCluster(ctx, t, cp)
	const runFor = 15 * time.Second
	queuedGang(ctx, t, cp, "team-a", "first", 4, 4, func(b *cluster.PodBuilder) *cluster.PodBuilder {
		return b.RunFor(runFor)
	})
	waitGangBound(ctx, t, cp, "first", 4, 30*time.Second)

	createPodGroup(ctx, t, client, volcanoAPI, "second", 4)
	var members []string
	for i := 0; i < 4; i++ {
		name := fmt.Sprintf("second-%d", i)
		b := cluster.GpuPod(name, 4).Label("kueue.x-k8s.io/queue-name", "team-a")
		if _, err := volcanoAPI.memberOf(b, "second").Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
		members = append(members, name)
	}
	waitForReason(ctx, t, cp, "Pod", "WaitingForQuota", members)
	waitForReason(ctx, t, cp, "PodGroup", "WaitingForQuota", []string{"second"})
	status := waitGroupPhase(ctx, t, client, "second", "Pending", 10*time.Second)
	checkUnschedulableBecause(t, status, "WaitingForQuota", "queue team-a: needs 16 nvidia.com/gpu")
	if bound := countBound(volcanoMembers(ctx, t, cp, "second")); bound != 0 {
		t.Fatalf("%d members of the waiting gang bound while its queue is at quota", bound)
	}

	deadline := time.Now().Add(60 * time.Second)
	for countBound(volcanoMembers(ctx, t, cp, "second")) != 4 {
		if time.Now().After(deadline) {
			t.Fatalf("waiting gang not bound whole 60 s after it was created")
		}
		time.Sleep(200 * time.Millisecond)
	}
	waitGroupPhase(ctx, t, client, "second", "Running", 30*time.Second)
	waitForReason(ctx, t, cp, "PodGroup", "Admitted", []string{"second"})
	for name, events := range gpuschedEvents(ctx, t, cp) {
		if len(events) > maxEventsPerObject {
			var reasons []string
			for _, e := range events {
				reasons = append(reasons, e.Reason)
			}
			t.Errorf("%s: %d gpusched Events %v, want at most %d", name, len(events), reasons, maxEventsPerObject)
		}
	}
}
