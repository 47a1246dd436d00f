package suite_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// TestControlPlaneBindsAGpuPod proves the fixture end to end: kube-scheduler
// calls gpusched, gpusched binds with a GPU assignment under deploy/'s RBAC,
// and the fake kubelet runs the pod.
func TestControlPlaneBindsAGpuPod(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	checkKubectlVersion(ctx, t, cp)

	nodes, err := cluster.DemoNodes(cp.Repo)
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.CreateNodes(ctx, cp.Client, nodes); err != nil {
		t.Fatal(err)
	}
	if err := controlplane.EnsureNamespace(ctx, cp.Client, "e2e"); err != nil {
		t.Fatal(err)
	}
	_, err = cluster.NewPod("e2e", "gpu-2").SchedulerName(cluster.SchedulerName).Gpus(2).Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cluster.WaitRunning(ctx, cp.Client, "e2e", "gpu-2", 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	node, err := cp.Client.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkGpuIDs(t, pod, node)
	t.Logf("pod bound to %s with %s=%s", node.Name, cluster.GpuIDsAnnotation, pod.Annotations[cluster.GpuIDsAnnotation])
}

// checkGpuIDs asserts 2 distinct GPU ids, each below the node's allocatable
// count.
func checkGpuIDs(t *testing.T, pod *corev1.Pod, node *corev1.Node) {
	t.Helper()
	ids, err := cluster.GpuIDs(pod)
	if err != nil {
		t.Fatal(err)
	}
	allocatable := node.Status.Allocatable[corev1.ResourceName(cluster.GpuResource)]
	if len(ids) != 2 {
		t.Fatalf("gpu ids %v: want 2", ids)
	}
	seen := map[int]bool{}
	for _, id := range ids {
		if id < 0 || int64(id) >= allocatable.Value() {
			t.Errorf("gpu id %d outside node %s's %d allocatable GPUs", id, node.Name, allocatable.Value())
		}
		if seen[id] {
			t.Errorf("gpu id %d twice in %v", id, ids)
		}
		seen[id] = true
	}
}

// pinnedRelease is the release the binaries were built from:
// $E2E_K8S_RELEASE (prepare.sh sets it for the main pins and for each
// older release), else the main pins' tests/e2e/k8s/RELEASE.
func pinnedRelease(t *testing.T, repo string) string {
	t.Helper()
	if release := os.Getenv("E2E_K8S_RELEASE"); release != "" {
		return release
	}
	data, err := os.ReadFile(filepath.Join(repo, "tests", "e2e", "k8s", "RELEASE"))
	if err != nil {
		t.Fatalf("pinned release: %v", err)
	}
	return strings.TrimSpace(string(data))
}

// checkKubectlVersion runs the built kubectl against the apiserver: both
// must report the pinned release.
func checkKubectlVersion(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	wantVersion := pinnedRelease(t, cp.Repo)
	out, err := cp.Kubectl(ctx, "version", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var version struct {
		ClientVersion struct{ GitVersion string } `json:"clientVersion"`
		ServerVersion struct{ GitVersion string } `json:"serverVersion"`
	}
	if err := json.Unmarshal(out, &version); err != nil {
		t.Fatalf("kubectl version -o json: %v\n%s", err, out)
	}
	if version.ClientVersion.GitVersion != wantVersion || version.ServerVersion.GitVersion != wantVersion {
		t.Errorf("kubectl version: client %q, server %q; want %s", version.ClientVersion.GitVersion, version.ServerVersion.GitVersion, wantVersion)
	}
}
