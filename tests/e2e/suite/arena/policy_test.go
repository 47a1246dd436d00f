package arena

import (
	"strings"
	"testing"
)

func TestKueueMeaningGivesAnUnselectiveClusterQueueEveryNamespace(t *testing.T) {
	got, err := KueueMeaning(`apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: open}
spec: {cohort: research}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: closed}
spec:
  namespaceSelector: {matchLabels: {team: a}}
`)
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(got, "---\n")
	if len(docs) != 2 {
		t.Fatalf("%d documents, want 2:\n%s", len(docs), got)
	}
	if !strings.Contains(docs[0], "namespaceSelector: {}") {
		t.Errorf("ClusterQueue open without namespaceSelector: {}:\n%s", docs[0])
	}
	if !strings.Contains(docs[1], "team: a") || strings.Contains(docs[1], "namespaceSelector: {}") {
		t.Errorf("ClusterQueue closed's own selector changed:\n%s", docs[1])
	}
}

func TestKueueMeaningRefusesGpuschedOnlyObjects(t *testing.T) {
	_, err := KueueMeaning("apiVersion: gpusched.io/v1alpha1\nkind: SchedulerConfig\nmetadata: {name: s}\n")
	if err == nil || !strings.Contains(err.Error(), "not kueue.x-k8s.io") {
		t.Fatalf("err = %v, want a refusal naming the group", err)
	}
}
