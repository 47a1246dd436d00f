package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"gpusched.io/e2e/suite/controlplane"
)

// Checks of the placement tests (gpus_test.go, gpus_*_test.go and
// nodes_test.go): one pod bound or refused, a burst settled, devices
// assigned consistently; failures quote gpusched's view.

// BindPinned creates the pod and waits until it is bound.
func BindPinned(ctx context.Context, tb testing.TB, cp *controlplane.ControlPlane, b *PodBuilder) *corev1.Pod {
	tb.Helper()
	created, err := b.Create(ctx, cp.Client)
	if err != nil {
		tb.Fatal(err)
	}
	pod, err := WaitBound(ctx, cp.Client, created.Namespace, created.Name, BindTimeout)
	if err != nil {
		tb.Fatalf("%v\ngpusched's view: %s", err, GpuschedView(cp, pinnedTo(created)...))
	}
	return pod
}

// pinnedTo is the node a pod's nodeSelector pins it to, if any.
func pinnedTo(pod *corev1.Pod) []string {
	if node, ok := pod.Spec.NodeSelector[HostnameLabel]; ok {
		return []string{node}
	}
	return nil
}

// RefusedPinned waits for the first FailedScheduling event of pod name (in
// Namespace), checks that it stays pending, and returns its latest
// FailedScheduling message.
func RefusedPinned(ctx context.Context, tb testing.TB, cp *controlplane.ControlPlane, name string) string {
	tb.Helper()
	if _, err := WaitFailedScheduling(ctx, cp.Client, Namespace, name, BindTimeout); err != nil {
		tb.Fatal(err)
	}
	if err := StaysPending(ctx, cp.Client, Namespace, name, pendingHold); err != nil {
		tb.Fatalf("%v\ngpusched's view: %s", err, GpuschedView(cp))
	}
	messages, err := FailedSchedulingMessages(ctx, cp.Client, Namespace, name)
	if err != nil {
		tb.Fatal(err)
	}
	return messages[len(messages)-1]
}

// WaitProductSettled waits until, of the pods named prefix*, bound are
// bound and pending have a FailedScheduling event, and checks that the
// pending ones stay so.
func WaitProductSettled(ctx context.Context, tb testing.TB, cp *controlplane.ControlPlane, prefix string, bound, pending int) {
	tb.Helper()
	var state string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, SettleTimeout, true, func(ctx context.Context) (bool, error) {
		pods, _, err := ListPodsAndNodes(ctx, cp.Client)
		if err != nil {
			return false, nil
		}
		reasons, err := FailedSchedulingByPod(ctx, cp.Client, Namespace)
		if err != nil {
			return false, nil
		}
		var b, p int
		var lines []string
		for i := range pods {
			pod := &pods[i]
			if !strings.HasPrefix(pod.Name, prefix) {
				continue
			}
			lines = append(lines, fmt.Sprintf("%s node=%q reason=%q", pod.Name, pod.Spec.NodeName, reasons[pod.Name]))
			if Bound(pod) {
				b++
			} else if reasons[pod.Name] != "" {
				p++
			}
		}
		state = strings.Join(lines, "\n  ")
		return b == bound && p == pending, nil
	})
	if err != nil {
		tb.Fatalf("%s*: want %d bound and %d refused: %v\n  %s", prefix, bound, pending, err, state)
	}
	tb.Logf("%s*:\n  %s", prefix, state)
}

// CheckDevicesOnEveryNode applies NodeGpuUse.CheckDevices to every node
// (an error of the test, not a fatal one, per broken assignment).
func CheckDevicesOnEveryNode(tb testing.TB, cp *controlplane.ControlPlane, nodes []corev1.Node, pods []corev1.Pod) {
	tb.Helper()
	use := GpuUse(nodes, pods)
	var problems, broken []string
	for _, n := range nodes {
		if found := use[n.Name].CheckDevices(); len(found) > 0 {
			problems = append(problems, found...)
			broken = append(broken, n.Name)
		}
	}
	for i := range pods {
		if p := &pods[i]; Bound(p) && use[p.Spec.NodeName] == nil {
			problems = append(problems, fmt.Sprintf("%s bound to %s, which is not a node", p.Name, p.Spec.NodeName))
		}
	}
	if len(problems) > 0 {
		tb.Errorf("device assignments broken:\n  %s\ngpusched's view: %s", strings.Join(problems, "\n  "), GpuschedView(cp, broken...))
	}
}

// GpuschedView summarises gpusched's GET /v1/nodes for the named nodes
// (all when none are named): a diagnostic for failure messages only, never
// a verdict.
func GpuschedView(cp *controlplane.ControlPlane, names ...string) string {
	nodes, err := GpuschedNodes(context.Background(), cp.GpuschedURL)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	var b strings.Builder
	for _, n := range nodes {
		if len(names) > 0 && !slices.Contains(names, n.Name) {
			continue
		}
		var unhealthy []int
		for _, g := range n.Gpus {
			if !g.Healthy {
				unhealthy = append(unhealthy, g.Index)
			}
		}
		fmt.Fprintf(&b, "\n  %s (topology: %s; unhealthy GPUs %v):", n.Name, n.Topology.Source, unhealthy)
		for _, p := range n.Pods {
			fmt.Fprintf(&b, " %s=%v@%d", p.Name, p.GpuIDs, p.MilliPerGpu)
		}
	}
	return b.String()
}
