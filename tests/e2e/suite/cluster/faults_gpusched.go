package cluster

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"gpusched.io/e2e/suite/controlplane"
	"gpusched.io/e2e/suite/promtext"
)

// ModelPod is a pod as gpusched's model holds it (GET /v1/nodes).
type ModelPod struct {
	Node, Key, UID string
	GpuIDs         []int
}

// GpuschedModel reads gpusched's /v1/nodes: the pods its model holds, by
// UID. Only a check: the tests never decide anything from it.
func GpuschedModel(ctx context.Context, gpuschedURL string) (map[string]ModelPod, error) {
	nodes, err := GpuschedNodes(ctx, gpuschedURL)
	if err != nil {
		return nil, err
	}
	pods := map[string]ModelPod{}
	for _, n := range nodes {
		for _, p := range n.Pods {
			ids := slices.Clone(p.GpuIDs)
			sort.Ints(ids)
			pods[p.UID] = ModelPod{Node: n.Name, Key: p.Name, UID: p.UID, GpuIDs: ids}
		}
	}
	return pods, nil
}

// ModelDiff compares gpusched's model with the API server's pods: every
// pod holding a node (bound, not finished; being deleted counts) must be
// in the model on that node with the devices of its gpu-ids, and the model
// must hold nothing else. One sentence per difference; none when they
// agree.
func ModelDiff(model map[string]ModelPod, pods []corev1.Pod) []string {
	var diffs []string
	inAPI := map[string]bool{}
	for i := range pods {
		p := &pods[i]
		if !Bound(p) || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		key := p.Namespace + "/" + p.Name
		inAPI[string(p.UID)] = true
		got, ok := model[string(p.UID)]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("pod %s (uid %s) is bound to %s but missing from gpusched's model", key, p.UID, p.Spec.NodeName))
			continue
		}
		want, _ := GpuIDs(p)
		sort.Ints(want)
		if got.Node != p.Spec.NodeName || !slices.Equal(got.GpuIDs, want) {
			diffs = append(diffs, fmt.Sprintf("pod %s: API has node %s GPUs %v, gpusched's model node %s GPUs %v",
				key, p.Spec.NodeName, want, got.Node, got.GpuIDs))
		}
	}
	for uid, m := range model {
		if !inAPI[uid] {
			diffs = append(diffs, fmt.Sprintf("gpusched's model holds GPUs %v on %s for pod %s (uid %s), which holds no node in the API",
				m.GpuIDs, m.Node, m.Key, uid))
		}
	}
	sort.Strings(diffs)
	return diffs
}

// GrepLog returns the lines of a component log that contain every one of
// `all`.
func GrepLog(path string, all ...string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 0, 64<<10), 4<<20) // klog lines carry whole pods
	for scanner.Scan() {
		line := scanner.Text()
		matched := true
		for _, s := range all {
			matched = matched && strings.Contains(line, s)
		}
		if matched {
			out = append(out, line)
		}
	}
	return out, scanner.Err()
}

// WaitGpuschedNodes waits until gpusched's model holds at least n nodes
// (its gpusched_nodes gauge), or fails after timeout.
func WaitGpuschedNodes(ctx context.Context, tb testing.TB, cp *controlplane.ControlPlane, n int, timeout time.Duration) {
	tb.Helper()
	var last float64
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		text, err := cp.GpuschedMetrics()
		if err != nil {
			return false, nil
		}
		last = promtext.Parse(text).Sum("gpusched_nodes", nil)
		return int(last) >= n, nil
	})
	if err != nil {
		tb.Fatalf("gpusched_nodes = %v, want %d: %v", last, n, err)
	}
}

// GpuschedReady reads gpusched's /readyz: true on 200, false on 503 (the
// model has not loaded yet), an error otherwise.
func GpuschedReady(ctx context.Context, gpuschedURL string) (bool, error) {
	status, _, err := gpuschedGet(ctx, gpuschedURL, "/readyz")
	switch {
	case err != nil:
		return false, err
	case status == http.StatusOK:
		return true, nil
	case status == http.StatusServiceUnavailable:
		return false, nil
	}
	return false, fmt.Errorf("gpusched /readyz: status %d", status)
}

// GpuschedReadyz reads gpusched's /readyz: its status and its body (the
// "degraded:" lines of what it cannot read).
func GpuschedReadyz(ctx context.Context, gpuschedURL string) (int, string, error) {
	status, body, err := gpuschedGet(ctx, gpuschedURL, "/readyz")
	return status, string(body), err
}
