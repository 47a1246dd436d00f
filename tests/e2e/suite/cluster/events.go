package cluster

import (
	"context"
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// FailedScheduling is the event reason of a failed scheduling attempt.
const FailedScheduling = "FailedScheduling"

type eventNote struct {
	uid  types.UID
	at   time.Time
	note string
}

// FailedSchedulingMessages returns the messages of FailedScheduling events
// about the pod, oldest first. kube-scheduler v1.37 records through
// events.k8s.io/v1 when the server has it (it does); both APIs are read,
// and each event counted once, so that an event written through core/v1
// (by gpusched, say) is found too.
func FailedSchedulingMessages(ctx context.Context, client kubernetes.Interface, namespace, pod string) ([]string, error) {
	seen := map[types.UID]eventNote{}
	core, err := client.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": pod, "reason": FailedScheduling}.String(),
	})
	if err != nil {
		return nil, fmt.Errorf("core/v1 events of %s/%s: %w", namespace, pod, err)
	}
	for _, e := range core.Items {
		seen[e.UID] = eventNote{e.UID, coreEventTime(&e), e.Message}
	}
	// events.k8s.io field selectors are not documented as stable: filter
	// here instead.
	list, err := client.EventsV1().Events(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("events.k8s.io/v1 events of %s/%s: %w", namespace, pod, err)
	}
	for _, e := range list.Items {
		if e.Reason != FailedScheduling || e.Regarding.Kind != "Pod" || e.Regarding.Name != pod {
			continue
		}
		seen[e.UID] = eventNote{e.UID, eventsV1Time(&e), e.Note}
	}
	notes := make([]eventNote, 0, len(seen))
	for _, n := range seen {
		notes = append(notes, n)
	}
	sort.Slice(notes, func(i, j int) bool {
		if !notes[i].at.Equal(notes[j].at) {
			return notes[i].at.Before(notes[j].at)
		}
		return notes[i].uid < notes[j].uid
	})
	messages := make([]string, len(notes))
	for i, n := range notes {
		messages[i] = n.note
	}
	return messages, nil
}
