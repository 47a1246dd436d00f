package suite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// crdPickupLimit: how soon a gang must be bound after its PodGroup CRD is
// served. Well under the 30 s of --podgroup-api-poll-ms, which this test
// leaves at its default: a gpusched that waited for the poll (16 s on
// average) fails it.
const crdPickupLimit = 10 * time.Second

// TestPodGroupCRDInstalledLaterIsPickedUpAtOnce: gpusched starts with no
// PodGroup CRD installed and finds the Volcano API absent. Then the CRD is
// installed and, once it is Established and served, a gang is created right
// away (PodGroup of minMember 4, four 4-GPU members). gpusched watches the
// two PodGroup CRDs (deploy/'s ClusterRole lets it read them), so it lists
// the Volcano PodGroups at once, and the gang is bound within seconds.
func TestPodGroupCRDInstalledLaterIsPickedUpAtOnce(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: writeGangPolicy(t)})
	client, err := dynamic.NewForConfig(cp.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	gpuschedLog := filepath.Join(cp.Dir, "gpusched.log")
	waitForLogLine(ctx, t, gpuschedLog, volcanoAPI.group, "PodGroups are not served")

	installPodGroupCRD(ctx, t, client, volcanoAPI) // returns once served
	served := time.Now()
	const members = 4
	createPodGroup(ctx, t, client, volcanoAPI, "ring", members)
	for i := 0; i < members; i++ {
		b := cluster.NewPod(cluster.Namespace, fmt.Sprintf("ring-%d", i)).SchedulerName(cluster.SchedulerName).
			Label("kueue.x-k8s.io/queue-name", "q").Gpus(4)
		if _, err := volcanoAPI.memberOf(b, "ring").Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
	}
	pods, err := cluster.WaitForPods(ctx, cp.Client, cluster.Namespace, func(pods []corev1.Pod) bool {
		return countBound(pods) == members
	}, crdPickupLimit)
	if err != nil {
		lines, _ := cluster.GrepLog(gpuschedLog, "kube sync:")
		t.Fatalf("gang not bound within %v of its CRD being served: %v; gpusched said %q", crdPickupLimit, err, lines)
	}
	t.Logf("all %d members bound %v after the CRD was served", members, time.Since(served).Round(time.Millisecond))
	checkGangPlacement(t, pods, 4)
	if lines, _ := cluster.GrepLog(gpuschedLog, "CustomResourceDefinition podgroups."+volcanoAPI.group, "is established"); len(lines) == 0 {
		t.Errorf("gpusched.log never says that the CRD podgroups.%s is established", volcanoAPI.group)
	}
}

// waitForLogLine waits until a line of the log at path holds every one of
// `all`.
func waitForLogLine(ctx context.Context, t *testing.T, path string, all ...string) {
	t.Helper()
	for {
		if lines, _ := cluster.GrepLog(path, all...); len(lines) > 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never said %q", path, all)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
