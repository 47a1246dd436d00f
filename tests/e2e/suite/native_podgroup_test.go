package suite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// Gangs declared by Kubernetes' own PodGroup (scheduling.k8s.io/v1beta1,
// KEP-4671), which v1.37 serves only with the GenericWorkload feature gate
// and kube-apiserver's runtime-config: pods name their group in
// spec.schedulingGroup.podGroupName, and the group's size is
// spec.schedulingPolicy.gang.minCount. With the gate kube-scheduler's
// default profile also runs its GangScheduling plugin, which gangs the same
// pods its own way (PreEnqueue until minCount exist, Permit until they all
// fit). gpusched holds the members by its gate and lifts all four at once;
// the two gangs must agree, or each waits for the other for ever.

// nativeGangCondition is gpusched's condition on a native PodGroup;
// kube-scheduler owns PodGroupInitiallyScheduled.
const nativeGangCondition = "gpusched.io/Admitted"

// TestNativePodGroupGangIsAdmittedWhole: a PodGroup of minCount 4 carrying
// queue q's label, and four 4-GPU members without one, created a second
// apart. None is bound before the fourth exists; then all four are, with
// disjoint GPUs, once with kube-scheduler's GangScheduling plugin (default
// with the gate) and once with it disabled in the gpusched profile. Either
// way the PodGroup ends with gpusched's condition and kube-scheduler's
// PodGroupInitiallyScheduled both True: neither status writer drops the
// other's.
func TestNativePodGroupGangIsAdmittedWhole(t *testing.T) {
	for _, c := range []struct {
		name       string
		gangPlugin bool
	}{{"WithGangSchedulingPlugin", true}, {"WithoutGangSchedulingPlugin", false}} {
		t.Run(c.name, func(t *testing.T) { runNativeGang(t, c.gangPlugin) })
	}
}

func runNativeGang(t *testing.T, gangPlugin bool) {
	opts := controlplane.Options{Webhook: true, Policy: writeGangPolicy(t), GenericWorkload: true,
		GpuschedArgs: []string{"--podgroup-api-poll-ms", podGroupPollMs}}
	if !gangPlugin {
		opts.SchedulerConfig = disableGangScheduling
	}
	cp := controlplane.Start(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	const members = 4
	createNativePodGroup(ctx, t, cp, "ring", members)
	for i := 0; i < members; i++ {
		pod := cluster.GpuPod(fmt.Sprintf("ring-%d", i), 4).Build()
		pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptrTo("ring")}
		created, err := cp.Client.CoreV1().Pods(cluster.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if created.Spec.SchedulingGroup == nil {
			t.Fatalf("member %d: spec.schedulingGroup dropped (is GenericWorkload on?)", i)
		}
		if i < members-1 {
			time.Sleep(time.Second)
			checkNoneBound(ctx, t, cp)
		}
	}
	checkGangPlacement(t, waitAllBound(ctx, t, cp, members), 4)
	// kube-scheduler schedules the group as one entity in both cases (its
	// queue does, by the gate; the plugin only adds the minCount waits).
	waitPodGroupConditionsTrue(ctx, t, cp, "ring",
		[]string{nativeGangCondition, schedulingv1beta1.PodGroupInitiallyScheduled})
}

// disableGangScheduling turns kube-scheduler's GangScheduling plugin off in
// the gpusched profile, whatever the gate enables by default.
func disableGangScheduling(config map[string]any) {
	profiles, _ := config["profiles"].([]any)
	for _, p := range profiles {
		if profile, ok := p.(map[string]any); ok {
			profile["plugins"] = map[string]any{"multiPoint": map[string]any{
				"disabled": []any{map[string]any{"name": "GangScheduling"}}}}
		}
	}
}

// createNativePodGroup creates a gang of minCount in queue q (by the
// PodGroup's own Kueue label: its pods carry none).
func createNativePodGroup(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string, minCount int32) {
	t.Helper()
	group := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster.Namespace,
			Labels: map[string]string{"kueue.x-k8s.io/queue-name": "q"}},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}}},
	}
	if _, err := cp.Client.SchedulingV1beta1().PodGroups(cluster.Namespace).Create(ctx, group, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create PodGroup %s: %v", name, err)
	}
}

// waitPodGroupConditionsTrue waits until the PodGroup has each condition
// type of `types` True at once: gpusched's and kube-scheduler's conditions
// side by side, neither writer dropping the other's.
func waitPodGroupConditionsTrue(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string, types []string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last []metav1.Condition
	for time.Now().Before(deadline) {
		group, err := cp.Client.SchedulingV1beta1().PodGroups(cluster.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		last = group.Status.Conditions
		all := true
		for _, want := range types {
			all = all && apimeta.IsStatusConditionTrue(last, want)
		}
		if all {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("PodGroup %s: want %v True, conditions %+v", name, types, last)
}

func ptrTo[T any](v T) *T { return &v }

// TestJobGangIsANativeGangEvictedAndReadmittedWhole: with the
// WorkloadWithJob gate (alpha in v1.37, off by default; kube-apiserver for
// the Job's spec.scheduling, kube-controller-manager for its Job
// controller) the Job controller makes a Workload and a PodGroup of
// minCount 4 for a Job whose spec.scheduling asks for a gang, and names
// that PodGroup in each pod's spec.schedulingGroup. The pods carry only
// the queue label, the PodGroup none. gpusched gates the four and admits
// them as one native gang; a higher-priority gang evicts it whole; the Job
// controller recreates the four pods, gpusched gates them again and admits
// them as one gang once the urgent gang is done (evictAndReadmitJobGang,
// as for the indexed Job of Kueue's keys).
//
// v1.37.2's Job controller creates the Workload and PodGroup only for a
// Job that has not started (isNewJob) and afterwards reuses the one it
// owns: the recreated pods name the same PodGroup object (same UID), not a
// new one per generation. (It means to give each pod an owner reference
// to the PodGroup too, but GetPodFromTemplate drops the template's owner
// references, so the pods carry only the Job's: the test does not ask for
// it.)
func TestJobGangIsANativeGangEvictedAndReadmittedWhole(t *testing.T) {
	// GenericWorkload gives each component its gate (and kube-apiserver the
	// runtime-config); these add WorkloadWithJob to it.
	gates := "--feature-gates=WorkloadWithJob=true"
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: jobEvictionPolicy(t),
		GenericWorkload:         true,
		APIServerArgs:           []string{gates},
		GpuschedArgs:            []string{"--podgroup-api-poll-ms", podGroupPollMs},
		ControllerManager:       &controlplane.ControllerManager{Controllers: []string{"job-controller"}, ExtraArgs: []string{gates}},
		KubeletFailsDeletedPods: true,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	first, second := evictAndReadmitJobGang(ctx, t, cp, nativeGangJob())
	group := jobPodGroup(t, first)
	if again := jobPodGroup(t, second); again != group {
		t.Errorf("recreated pods name PodGroup %s, the first generation %s", again, group)
	}
	checkOnlyPodGroup(ctx, t, cp, group, first)
	waitPodGroupConditionsTrue(ctx, t, cp, group, []string{nativeGangCondition})
	checkNoForbidden(t, cp)
}

// jobPodGroup is the PodGroup all the pods name in spec.schedulingGroup;
// it fails the test if a pod names none or another one.
func jobPodGroup(t *testing.T, pods []corev1.Pod) string {
	t.Helper()
	names := map[string]bool{}
	for i := range pods {
		p := &pods[i]
		if p.Spec.SchedulingGroup == nil || p.Spec.SchedulingGroup.PodGroupName == nil {
			t.Fatalf("%s: no spec.schedulingGroup: the Job controller made no PodGroup", p.Name)
		}
		names[*p.Spec.SchedulingGroup.PodGroupName] = true
	}
	if len(names) != 1 {
		t.Fatalf("one generation of a Job's pods names PodGroups %v", cluster.SortedKeys(names))
	}
	return cluster.SortedKeys(names)[0]
}

// checkOnlyPodGroup: the namespace holds one PodGroup, `name`, made before
// the pods `first` were: the one the Job controller made for the Job, not
// deleted and made again under the same name on the way.
func checkOnlyPodGroup(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, name string, first []corev1.Pod) {
	t.Helper()
	list, err := cp.Client.SchedulingV1beta1().PodGroups(cluster.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != name {
		var names []string
		for _, g := range list.Items {
			names = append(names, g.Name)
		}
		t.Fatalf("PodGroups %v; want only %s", names, name)
	}
	made := list.Items[0].CreationTimestamp
	for i := range first {
		if first[i].CreationTimestamp.Before(&made) {
			t.Errorf("PodGroup %s made at %v, after the first generation's %s (%v)", name, made, first[i].Name,
				first[i].CreationTimestamp)
		}
	}
}

// nativeGangJob: indexedGangJob's four pods of 8 GPUs in team-a, a gang of
// four by the Job's own spec.scheduling instead of Kueue's group keys.
func nativeGangJob() *batchv1.Job {
	job := indexedGangJob()
	template := &job.Spec.Template
	delete(template.Labels, "kueue.x-k8s.io/pod-group-name")
	delete(template.Annotations, "kueue.x-k8s.io/pod-group-total-count")
	job.Spec.Scheduling = &batchv1.JobSchedulingConfiguration{
		SchedulingPolicy: &schedulingv1alpha3.WorkloadPodGroupSchedulingPolicy{
			Gang: &schedulingv1alpha3.WorkloadPodGroupGangSchedulingPolicy{MinCount: int32Ref(jobMembers)}}}
	return job
}
