package suite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// A DRA gang that gpusched admits and kube-scheduler cannot allocate
// (issue I §2). gpusched evaluates a subset of CEL device selectors and
// leaves any other to kube-scheduler's DynamicResources plugin rather than
// refuse on a guess, so it may pin a gang to a node where the plugin then
// finds no device. The gang's admission timeout rolls it back, as it does
// for any admitted gang a member of which cannot bind.

// newDriverSelector asks for a device whose driver is 580 or newer: valid
// CEL (Kubernetes' semver library) outside gpusched's subset, which
// compares versions (==, compareTo, isGreaterThan, isLessThan) but reads
// no part of one. The slices publish DraDriverVersion (570), so it matches
// no device until the driver is upgraded.
const newDriverSelector = "device.attributes['gpu.nvidia.com'].driverVersion.major() >= 580"

// TestDraGangKubeSchedulerCannotAllocateIsRolledBack: one DRA-only DGX
// H100 (driver 570), team-a of 8 GPUs, gang.admissionTimeout 5 s. Gang
// "newer" (2 pods, each claiming 4 GPUs that need a driver of 580 or newer) is
// admitted and both members pinned to the node, charging 8 GPUs;
// kube-scheduler cannot allocate their claims there. After the timeout
// gpusched rolls the gang back (PodsReadyTimeout on both pods, both
// gone); the queue's usage is 0 and the node's 8 GPUs are free in
// gpusched's view, and gang "next" (2 x 4 GPUs, no driver condition) is
// bound whole. Once "next" is done and the driver upgraded to 580.95.5,
// "newer", made again as its owner would, is bound whole with devices
// kube-scheduler allocated. Throughout, no gang stays partly bound.
func TestDraGangKubeSchedulerCannotAllocateIsRolledBack(t *testing.T) {
	const timeout = 5 * time.Second
	policy := timerPolicy(t, 8, map[string]string{"admissionTimeout": timeout.String(), "backoffBase": "1s", "backoffMax": "2s"})
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy,
		ControllerManager: &controlplane.ControllerManager{Controllers: []string{"resourceclaim-controller"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	node := draNodes[0]
	cluster.SetUpDraCluster(ctx, t, cp, node)
	createClaimTemplates(ctx, t, cp, cluster.GpuClaimTemplate("four-gpus", 4), newDriverTemplate("four-gpus-driver-580", 4))
	waitGpuschedOffers(ctx, t, cp, map[string]int{node: 8}, 8)
	// A member bound while the other is not lasts until the rollback (5 s):
	// 2 s is ample for kube-scheduler to bind a whole gang.
	monitor := startAdmissionMonitor(ctx, cp.Client, nil, nil, 2*time.Second, 0, nil)
	defer monitor.stop()

	draGang(ctx, t, cp, "newer", 2, "four-gpus-driver-580")
	waitGangPinned(ctx, t, cp, "newer", 2, node)
	admittedAt := time.Now()
	checkSelectorLeftToKubeScheduler(ctx, t, cp, newDriverSelector,
		"ResourceClaimTemplate "+cluster.Namespace+"/four-gpus-driver-580 request gpus")
	waitQueueGpus(ctx, t, cp, "team-a", 8)
	cluster.WaitFailedSchedulingContaining(ctx, t, cp.Client, "newer-0", "cannot allocate all claims", 30*time.Second)
	waitGangGone(ctx, t, cp, "newer", timeout+30*time.Second)
	gone := time.Since(admittedAt)
	if gone < timeout-time.Second {
		t.Errorf("rolled back %v after its admission, before the %v admission timeout", gone, timeout)
	}
	t.Logf("gang newer gone %v after it was admitted", gone.Round(time.Millisecond))
	waitForReason(ctx, t, cp, "Pod", "PodsReadyTimeout", memberNames("newer", 2))
	waitQueueGpus(ctx, t, cp, "team-a", 0)
	waitGpuschedFreeGpus(ctx, t, cp, node, 8)

	draGang(ctx, t, cp, "next", 2, "four-gpus")
	next := waitGangBound(ctx, t, cp, "next", 2, 30*time.Second)
	nextDevices := waitClaimsAllocated(ctx, t, cp, next, 4)
	checkDevicesDisjoint(t, nextDevices)

	finishGang(ctx, t, cp, "next")
	waitGangSucceeded(ctx, t, cp, "next", 30*time.Second)
	waitClaimsReleased(ctx, t, cp, nextDevices, true, 30*time.Second)
	cluster.UpgradeDraDriver(ctx, t, cp, node, "580.95.5")
	draGang(ctx, t, cp, "newer", 2, "four-gpus-driver-580")
	newer := waitGangBound(ctx, t, cp, "newer", 2, 60*time.Second)
	checkDevicesDisjoint(t, waitClaimsAllocated(ctx, t, cp, newer, 4))
	for _, p := range monitor.stop() {
		t.Error(p)
	}
	t.Logf("monitor: %d checks", monitor.checkCount())
	// Two gangs of that template, each pod seen many times: said once.
	said, err := cluster.GrepLog(filepath.Join(cp.Dir, "gpusched.log"), "kube-scheduler decides", newDriverSelector)
	if err != nil || len(said) != 1 {
		t.Errorf("gpusched.log says the selector outside the subset %d times (%v), want once: %q", len(said), err, said)
	}
	checkNoForbidden(t, cp)
}

// checkSelectorLeftToKubeScheduler: /v1/nodes lists `expression` as
// outside gpusched's CEL subset, written in `where`.
func checkSelectorLeftToKubeScheduler(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, expression, where string) {
	t.Helper()
	listed, err := cluster.GpuschedUndecidedSelectors(ctx, cp.GpuschedURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range listed {
		if s.Expression == expression && slices.Contains(s.WrittenIn, where) && s.DecidedBy == "kube-scheduler" &&
			strings.Contains(s.Error, "outside the supported CEL subset") {
			return
		}
	}
	t.Errorf("/v1/nodes does not list %q (in %s) as left to kube-scheduler: %+v", expression, where, listed)
}

// newDriverTemplate is GpuClaimTemplate's `count` GPUs with the request's
// own newDriverSelector.
func newDriverTemplate(name string, count int) *resourcev1.ResourceClaimTemplate {
	tmpl := cluster.GpuClaimTemplate(name, count)
	tmpl.Spec.Spec.Devices.Requests[0].Exactly.Selectors = []resourcev1.DeviceSelector{
		{CEL: &resourcev1.CELDeviceSelector{Expression: newDriverSelector}}}
	return tmpl
}

// waitGangPinned waits until gpusched admitted all `count` members of the
// group and pinned each to node (admittedAndPinned).
func waitGangPinned(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, group string, count int, node string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		pods := gangPods(ctx, t, cp, group)
		var pinned []string
		for i := range pods {
			if admittedAndPinned(&pods[i]) && pinnedByAffinity(&pods[i]) == node {
				pinned = append(pinned, pods[i].Name)
			}
		}
		if len(pods) == count && len(pinned) == count {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gang %s: %d of %d pods exist, %v admitted and pinned to %s after 30 s", group, len(pods), count, pinned, node)
		}
	}
}

// waitGpuschedFreeGpus waits until gpusched's /v1/nodes shows `want` of
// the node's GPUs wholly free.
func waitGpuschedFreeGpus(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, node string, want int) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		nodes, err := cluster.GpuschedNodes(ctx, cp.GpuschedURL)
		free := 0
		for _, n := range nodes {
			for _, g := range n.Gpus {
				if n.Name == node && g.FreeMilli == 1000 {
					free++
				}
			}
		}
		if err == nil && free == want {
			return
		}
		last = fmt.Sprintf("%d free (%v)", free, err)
		if time.Now().After(deadline) {
			t.Fatalf("gpusched /v1/nodes: %s has %s GPUs after 15 s, want %d", node, last, want)
		}
	}
}
