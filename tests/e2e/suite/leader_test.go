package suite_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
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
func TestStandbyReplicaFollowsTheLeaderLease(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{
		GpuschedArgs: []string{"--leader-lease", controlplane.DeployNamespace + "/gpusched"}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	lease := writeLease(ctx, t, cp, nil, "other-pod_1234", 15)

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
