package arena

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
)

// TestRecorderFollowsAPodAndReplaysAFailedMember: a gang of 2 whose
// member 1 fails once is replaced by the replayer and the workload
// completes when both slots have succeeded.
func TestRecorderFollowsAPodAndReplaysAFailedMember(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := fake.NewClientset()
	arrivals := []Arrival{{At: 0, Queue: QueueRef{Namespace: "ns", LocalQueue: "lq"}, Class: "c", Name: "g", Pods: 2, Runtime: time.Second}}
	replayer := NewReplayer(client, "gpusched", arrivals)
	var mu sync.Mutex
	var failed []string
	rec, err := StartRecorder(ctx, client, arrivals, func(p PodRecord) {
		mu.Lock()
		failed = append(failed, p.Name)
		mu.Unlock()
		replayer.Replace(p)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()
	if err := replayer.Run(ctx, rec, time.Now(), arrivals); err != nil {
		t.Fatal(err)
	}
	pods := client.CoreV1().Pods("ns")
	waitPod := func(name string) *corev1.Pod {
		var pod *corev1.Pod
		err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			pod, err = pods.Get(ctx, name, metav1.GetOptions{})
			return err == nil, nil
		})
		if err != nil {
			t.Fatalf("pod %s never created: %v", name, err)
		}
		return pod
	}
	// The arm lifts the gates (none here), binds, runs; member 1 fails.
	for _, name := range []string{"g-m0", "g-m1"} {
		pod := waitPod(name)
		pod.Spec.NodeName = "n"
		pod.Status.Phase = corev1.PodRunning
		if name == "g-m1" {
			pod.Status.Phase = corev1.PodFailed
		}
		if _, err := pods.Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"g-m0", "g-m1-r1"} {
		pod := waitPod(name)
		pod.Spec.NodeName, pod.Status.Phase = "n", corev1.PodSucceeded
		if _, err := pods.Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-rec.Done():
	case <-ctx.Done():
		t.Fatalf("never complete: %+v", rec.Records())
	}
	replayer.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(failed) != 1 || failed[0] != "g-m1" {
		t.Errorf("failed pods %v, want [g-m1]", failed)
	}
	if _, replacements, err := replayer.Stats(); replacements != 1 || err != nil {
		t.Errorf("%d replacements (%v), want 1", replacements, err)
	}
	for _, r := range rec.Records() {
		if r.Seen.IsZero() || r.Created.IsZero() || r.Bound.IsZero() || r.Admitted.IsZero() || r.Ended.IsZero() {
			t.Errorf("record %+v lacks a time", r)
		}
		if r.Name == "g-m1-r1" && (r.Attempt != 1 || r.Member != 1 || !r.Succeeded) {
			t.Errorf("replacement %+v, want attempt 1 of member 1, succeeded", r)
		}
	}
}
