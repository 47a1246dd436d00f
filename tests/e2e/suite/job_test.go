package suite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
	"gpusched.io/e2e/suite/kubelet"
)

// An indexed Job as a gang, with kube-controller-manager's job controller
// making its pods: evicted whole, the Job makes four new pods (same pod
// group name, new UIDs), which queue behind the gang that evicted them and
// are admitted again as one gang once it finishes.

const (
	jobName    = "train"
	jobMembers = 4
	jobGpus    = 8 // four members of 8 fill the demo cluster's 32 GPUs
	// jobNameLabel is the label the job controller puts on its pods.
	jobNameLabel = "batch.kubernetes.io/job-name"
)

// TestIndexedJobGangIsRecreatedAndReadmittedWhole: a low-priority indexed
// Job of 4 x 8 GPUs fills the queue's quota and is bound as one gang; a
// high-priority gang evicts it whole; the job controller replaces the four
// pods (a podFailurePolicy ignores the disruption); the new pods are gated
// and stay unadmitted while the preemptor runs, and are admitted and bound
// as one gang when it finishes. No pod of the new generation is admitted
// while the generation is incomplete, and none is evicted or replaced again
// on the way.
func TestIndexedJobGangIsRecreatedAndReadmittedWhole(t *testing.T) {
	cp := controlplane.Start(t, controlplane.Options{
		Webhook: true, Policy: jobEvictionPolicy(t),
		ControllerManager:       &controlplane.ControllerManager{Controllers: []string{"job-controller"}},
		KubeletFailsDeletedPods: true,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	evictAndReadmitJobGang(ctx, t, cp, indexedGangJob())
	checkNoForbidden(t, cp)
}

// jobEvictionPolicy: team-a of 32 GPUs (the demo cluster's), where a
// higher-priority workload may evict a lower-priority one.
func jobEvictionPolicy(t *testing.T) string {
	t.Helper()
	return queuePolicy(t, map[string]int{"team-a": 32}, map[string]map[string]string{
		"team-a": {"withinClusterQueue": "LowerPriority"}})
}

// evictAndReadmitJobGang creates the Job (a low-priority gang of jobMembers
// x jobGpus in team-a, filling the demo cluster) and checks its life
// through one eviction: bound whole; evicted whole by a high-priority gang
// "urgent" of the same shape; replaced by the job controller with four
// pods that are gated by gpusched alone and stay unbound while urgent runs;
// bound whole when urgent finishes. A monitor sees no pod of the new
// generation admitted while it is incomplete, and no third generation. It
// returns the two generations.
func evictAndReadmitJobGang(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, job *batchv1.Job) (first, second []corev1.Pod) {
	t.Helper()
	createPriorityClass(ctx, t, cp, "e2e-low", 100)
	createPriorityClass(ctx, t, cp, "e2e-high", 1000)
	if _, err := cp.Client.BatchV1().Jobs(cluster.Namespace).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first = waitJobPodsBound(ctx, t, cp, nil, 90*time.Second)
	checkGangPlacementGpus(t, first, jobGpus)
	firstUIDs := uidSet(first)
	monitor := startJobGangMonitor(ctx, cp, firstUIDs)

	queuedGang(ctx, t, cp, "team-a", "urgent", jobMembers, jobGpus, func(b *cluster.PodBuilder) *cluster.PodBuilder {
		return b.PriorityClass("e2e-high")
	})
	waitGangBound(ctx, t, cp, "urgent", jobMembers, 60*time.Second)
	waitJobPodsGone(ctx, t, cp, firstUIDs, 60*time.Second)
	recreated := waitJobPodsRecreated(ctx, t, cp, firstUIDs, 120*time.Second)
	for i := range recreated {
		if gates := gateNames(&recreated[i]); len(gates) != 1 || gates[0] != controlplane.WebhookGate {
			t.Errorf("recreated %s has gates %v, want [%s]", recreated[i].Name, gates, controlplane.WebhookGate)
		}
	}
	holdNoneBoundSelected(ctx, t, cp, jobNameLabel+"="+jobName, 3*time.Second)

	finishGang(ctx, t, cp, "urgent")
	second = waitJobPodsBound(ctx, t, cp, firstUIDs, 90*time.Second)
	checkGangPlacement(t, second, jobGpus)
	monitor.stopAndCheck(t, uidSet(recreated))
	checkJobRunning(ctx, t, cp)
	return first, second
}

// indexedGangJob: completions = parallelism = 4, Indexed; the pod template
// is a gpusched gang member of Kueue pod group "train" in LocalQueue
// team-a. Evictions (DisruptionTarget) are ignored by the podFailurePolicy,
// so they use up no retries; any other failure fails the index.
func indexedGangJob() *batchv1.Job {
	pod := cluster.GpuPod("template", jobGpus).PriorityClass("e2e-low").
		Label("kueue.x-k8s.io/queue-name", "team-a").
		Label("kueue.x-k8s.io/pod-group-name", jobName).
		Annotation("kueue.x-k8s.io/pod-group-total-count", fmt.Sprint(jobMembers)).
		Build()
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Name, pod.Namespace = "", "" // the job controller names its pods
	mode := batchv1.IndexedCompletion
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: jobName, Namespace: cluster.Namespace},
		Spec: batchv1.JobSpec{
			CompletionMode:       &mode,
			Completions:          int32Ref(jobMembers),
			Parallelism:          int32Ref(jobMembers),
			BackoffLimitPerIndex: int32Ref(0),
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action: batchv1.PodFailurePolicyActionIgnore,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{
					Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				}},
			}}},
			Template: corev1.PodTemplateSpec{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec},
		},
	}
}

// jobPods lists the Job's pods that are not being deleted.
func jobPods(ctx context.Context, cp *controlplane.ControlPlane) ([]corev1.Pod, error) {
	list, err := cp.Client.CoreV1().Pods(cluster.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: jobNameLabel + "=" + jobName})
	if err != nil {
		return nil, err
	}
	var live []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	return live, nil
}

// newJobPods are the live Job pods not in old.
func newJobPods(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, old map[types.UID]bool) []corev1.Pod {
	t.Helper()
	pods, err := jobPods(ctx, cp)
	if err != nil {
		t.Fatal(err)
	}
	var fresh []corev1.Pod
	for _, p := range pods {
		if !old[p.UID] {
			fresh = append(fresh, p)
		}
	}
	sort.Slice(fresh, func(i, j int) bool { return fresh[i].Name < fresh[j].Name })
	return fresh
}

// waitJobPodsBound waits until four Job pods not in old exist, all bound.
func waitJobPodsBound(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, old map[types.UID]bool, timeout time.Duration) []corev1.Pod {
	t.Helper()
	return waitNewJobPods(ctx, t, cp, old, jobMembers, timeout)
}

// waitJobPodsRecreated waits until the job controller made four pods not
// in old.
func waitJobPodsRecreated(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, old map[types.UID]bool, timeout time.Duration) []corev1.Pod {
	t.Helper()
	return waitNewJobPods(ctx, t, cp, old, 0, timeout)
}

// waitNewJobPods waits until four Job pods not in old exist, `bound` of
// them bound.
func waitNewJobPods(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, old map[types.UID]bool, bound int, timeout time.Duration) []corev1.Pod {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(200 * time.Millisecond) {
		pods := newJobPods(ctx, t, cp, old)
		if len(pods) == jobMembers && countBound(pods) >= bound {
			return pods
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: %d new pods, %d bound after %v (want %d, %d bound)",
				jobName, len(pods), countBound(pods), timeout, jobMembers, bound)
		}
	}
}

// waitJobPodsGone waits until no pod of uids exists any more (the job
// controller drops its finalizer once the pod is Failed).
func waitJobPodsGone(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, uids map[types.UID]bool, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(200 * time.Millisecond) {
		list, err := cp.Client.CoreV1().Pods(cluster.Namespace).List(ctx, metav1.ListOptions{
			LabelSelector: jobNameLabel + "=" + jobName})
		if err != nil {
			t.Fatal(err)
		}
		left := 0
		for _, p := range list.Items {
			if uids[p.UID] {
				left++
			}
		}
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: %d evicted pods still exist after %v", jobName, left, timeout)
		}
	}
}

func int32Ref(v int32) *int32 { return &v }

func uidSet(pods []corev1.Pod) map[types.UID]bool {
	set := map[types.UID]bool{}
	for _, p := range pods {
		set[p.UID] = true
	}
	return set
}

// finishGang makes the fake kubelet end each member of a running gang
// (Succeeded), as if its work were done.
func finishGang(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, group string) {
	t.Helper()
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:"1ms"}}}`, kubelet.RunForAnnotation))
	for _, p := range gangPods(ctx, t, cp, group) {
		if _, err := cp.Client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// checkJobRunning: the evictions used none of the Job's retries: it has
// four active pods and no failed index or terminal condition.
func checkJobRunning(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	job, err := cp.Client.BatchV1().Jobs(cluster.Namespace).Get(ctx, jobName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if job.Status.FailedIndexes != nil && *job.Status.FailedIndexes != "" {
		t.Errorf("job %s: failed indexes %q after an eviction the podFailurePolicy ignores", jobName, *job.Status.FailedIndexes)
	}
	for _, c := range job.Status.Conditions {
		if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobFailed || c.Type == batchv1.JobFailureTarget) {
			t.Errorf("job %s: condition %s (%s: %s)", jobName, c.Type, c.Reason, c.Message)
		}
	}
	t.Logf("job %s: active %d, failed %d, succeeded %d", jobName, job.Status.Active, job.Status.Failed, job.Status.Succeeded)
}

// checkNoForbidden: kube-controller-manager did all its writes with the
// bootstrap roles of the controllers it runs, and gpusched with deploy/'s.
func checkNoForbidden(t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	for _, name := range []string{controlplane.KubeControllerManager, controlplane.Gpusched} {
		lines, err := cluster.GrepLog(filepath.Join(cp.Dir, name+".log"), "forbidden")
		if err != nil {
			t.Error(err)
		}
		if len(lines) > 0 {
			t.Errorf("%s.log has %d forbidden requests, first: %s", name, len(lines), lines[0])
		}
	}
}

// jobGangMonitor polls the Job's pods from the eviction on and remembers
// every moment a pod of a later generation was admitted (ungated) or
// bound while its generation had fewer than four pods, and every pod of a
// later generation that was deleted.
type jobGangMonitor struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu         sync.Mutex
	violations []string
	seen       map[types.UID]string // later-generation pods, by UID: name
	polls      int
}

func startJobGangMonitor(ctx context.Context, cp *controlplane.ControlPlane, first map[types.UID]bool) *jobGangMonitor {
	ctx, cancel := context.WithCancel(ctx)
	m := &jobGangMonitor{cancel: cancel, done: make(chan struct{}), seen: map[types.UID]string{}}
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			list, err := cp.Client.CoreV1().Pods(cluster.Namespace).List(ctx, metav1.ListOptions{
				LabelSelector: jobNameLabel + "=" + jobName})
			if err == nil {
				m.observe(list.Items, first)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return m
}

func (m *jobGangMonitor) observe(pods []corev1.Pod, first map[types.UID]bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.polls++
	var later []corev1.Pod
	for _, p := range pods {
		if !first[p.UID] {
			later = append(later, p)
			m.seen[p.UID] = p.Name
		}
	}
	for _, p := range later {
		admitted := len(p.Spec.SchedulingGates) == 0 || p.Spec.NodeName != ""
		switch {
		case p.DeletionTimestamp != nil:
			m.violations = append(m.violations, fmt.Sprintf("recreated %s (uid %s) is being deleted", p.Name, p.UID))
		case admitted && len(later) < jobMembers:
			m.violations = append(m.violations, fmt.Sprintf("recreated %s admitted (node %q, gates %v) while only %d pods of its generation exist",
				p.Name, p.Spec.NodeName, gateNames(&p), len(later)))
		}
	}
}

// stopAndCheck ends the polling and fails the test for what it saw: a
// violation, or a later-generation pod other than the four in want (a pod
// replaced again, as a partial admission that timed out would be).
func (m *jobGangMonitor) stopAndCheck(t *testing.T, want map[types.UID]bool) {
	t.Helper()
	m.cancel()
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range m.violations {
		t.Error(v)
	}
	for uid, name := range m.seen {
		if !want[uid] {
			t.Errorf("a third generation: pod %s (uid %s) besides the four recreated", name, uid)
		}
	}
	t.Logf("monitor: %d polls, %d later-generation pods seen", m.polls, len(m.seen))
}
