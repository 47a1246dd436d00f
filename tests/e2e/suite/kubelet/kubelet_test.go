package kubelet

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
)

func boundPod(name string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: annotations},
		Spec:       corev1.PodSpec{NodeName: "node", Containers: []corev1.Container{{Name: "main", Image: "pause"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
}

// readiness polls the pod until it runs and returns its Ready condition
// then, and when (if ever, within wait) it became Ready.
func readiness(ctx context.Context, t *testing.T, client *fake.Clientset, name string, within time.Duration) (firstReady bool, readyAfter time.Duration) {
	t.Helper()
	start, first := time.Now(), true
	readyAfter = -1
	_ = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, within, true, func(ctx context.Context) (bool, error) {
		pod, err := client.CoreV1().Pods("ns").Get(ctx, name, metav1.GetOptions{})
		if err != nil || pod.Status.Phase != corev1.PodRunning {
			return false, nil
		}
		ready := podReady(pod)
		if first {
			firstReady, first = ready, false
		}
		if ready {
			readyAfter = time.Since(start)
		}
		return ready, nil
	})
	return firstReady, readyAfter
}

// A pod with ready-after runs not Ready first and becomes Ready later; one
// without is Ready as soon as it runs.
func TestReadyAfterHoldsReadinessBack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := fake.NewSimpleClientset(
		boundPod("slow", map[string]string{ReadyAfterAnnotation: "400ms"}),
		boundPod("quick", nil))
	k, err := StartFakeKubelet(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	if firstReady, after := readiness(ctx, t, client, "slow", 10*time.Second); firstReady || after < 0 {
		t.Errorf("slow: Ready when first running = %v, became Ready after %v; want false, then Ready", firstReady, after)
	}
	if firstReady, _ := readiness(ctx, t, client, "quick", 10*time.Second); !firstReady {
		t.Error("quick: not Ready when first running; want Ready at once")
	}
}

// A pod whose run ends before its ready-after finishes, never Ready.
func TestRunForEndsAPodThatIsNotReadyYet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := fake.NewSimpleClientset(boundPod("short", map[string]string{
		ReadyAfterAnnotation: "1h", RunForAnnotation: "200ms"}))
	k, err := StartFakeKubelet(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		pod, err := client.CoreV1().Pods("ns").Get(ctx, "short", metav1.GetOptions{})
		return err == nil && pod.Status.Phase == corev1.PodSucceeded, nil
	})
	if err != nil {
		t.Fatalf("short never Succeeded: %v", err)
	}
}
