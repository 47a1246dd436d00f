package suite_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// TestStandbyReplicaFollowsTheLeaderLease: gpusched runs with
// --leader-lease, as each of two replicas would. While the Lease is held by
// another pod's kube-scheduler it stands by: kube-scheduler's
// FailedScheduling says so and nothing binds. When the Lease names this
// host (whose name both containers of a pod share), it decides and the pod
// binds; when the Lease expires, it stands by again.
//
// Its own pod (--pod) carries the label the visibility Service selects on:
// gpusched.io/role=standby while it stands by, deciding while it decides.
func TestStandbyReplicaFollowsTheLeaderLease(t *testing.T) {
	const selfPod = "gpusched-self"
	cp := controlplane.Start(t, controlplane.Options{
		GpuschedArgs: []string{"--leader-lease", controlplane.DeployNamespace + "/gpusched",
			"--pod", controlplane.DeployNamespace + "/" + selfPod}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	createSelfPod(ctx, t, cp, selfPod)
	lease := writeLease(ctx, t, cp, nil, "other-pod_1234", 15)
	waitRoleLabel(ctx, t, cp, selfPod, "standby")

	if _, err := cluster.GpuPod("first", 1).Create(ctx, cp.Client); err != nil {
		t.Fatal(err)
	}
	messages, err := cluster.WaitFailedScheduling(ctx, cp.Client, cluster.Namespace, "first", 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(messages, "\n"), "standing by") {
		t.Errorf("FailedScheduling while another replica leads: %q, want gpusched's standby answer", messages)
	}

	lease = writeLease(ctx, t, cp, lease, host+"_5678", 15)
	if _, err := cluster.WaitForPods(ctx, cp.Client, cluster.Namespace, cluster.AllBound(1), 30*time.Second); err != nil {
		t.Fatalf("not bound once this host's kube-scheduler holds the Lease: %v", err)
	}
	waitRoleLabel(ctx, t, cp, selfPod, "deciding")

	// Renewed 20 s ago for 15 s: expired, so this replica stands by again.
	lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now().Add(-20 * time.Second)}
	writeLease(ctx, t, cp, lease, host+"_5678", 15)
	time.Sleep(2 * time.Second) // the follower rechecks every second
	if _, err := cluster.GpuPod("second", 1).Create(ctx, cp.Client); err != nil {
		t.Fatal(err)
	}
	if err := cluster.StaysPending(ctx, cp.Client, cluster.Namespace, "second", 4*time.Second); err != nil {
		t.Errorf("bound while the Lease had expired: %v", err)
	}
	waitRoleLabel(ctx, t, cp, selfPod, "standby")
}

// createSelfPod stands in for gpusched's own pod: a pod no scheduler
// places (its schedulerName is nobody's), which gpusched labels.
func createSelfPod(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string) {
	t.Helper()
	yes, no := true, false
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: controlplane.DeployNamespace,
			Labels: map[string]string{"app.kubernetes.io/name": "gpusched"}},
		Spec: corev1.PodSpec{SchedulerName: "nobody",
			// The namespace enforces the restricted Pod Security Standard.
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "gpusched", Image: "gpusched:e2e",
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no,
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}}},
	}
	if _, err := cp.Client.CoreV1().Pods(controlplane.DeployNamespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitRoleLabel waits up to 10 s for the pod's gpusched.io/role label to
// read want, and checks the Service's other label was left alone.
func waitRoleLabel(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name, want string) {
	t.Helper()
	var labels map[string]string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		pod, err := cp.Client.CoreV1().Pods(controlplane.DeployNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		labels = pod.Labels
		if labels["gpusched.io/role"] == want {
			if labels["app.kubernetes.io/name"] != "gpusched" {
				t.Errorf("labels %v: the other labels were not kept", labels)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("pod %s labels %v, want gpusched.io/role=%s", name, labels, want)
}

// writeLease creates the Lease (lease nil) or updates it to name holder,
// renewed now unless the caller set RenewTime.
func writeLease(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, lease *coordinationv1.Lease,
	holder string, seconds int32) *coordinationv1.Lease {
	t.Helper()
	leases := cp.Client.CoordinationV1().Leases(controlplane.DeployNamespace)
	if lease == nil {
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "gpusched", Namespace: controlplane.DeployNamespace}}
	}
	renewed := lease.Spec.RenewTime
	if renewed == nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != holder {
		renewed = &metav1.MicroTime{Time: time.Now()}
	}
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds, lease.Spec.RenewTime = &holder, &seconds, renewed
	var err error
	if lease.ResourceVersion == "" {
		lease, err = leases.Create(ctx, lease, metav1.CreateOptions{})
	} else {
		lease, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return lease
}
