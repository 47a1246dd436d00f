package arena

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"gpusched.io/e2e/suite/cluster"
)

// PodRecord is one pod's life as the arena's watch saw it: each time is
// when the watch first saw that state (zero if never), the same way in
// both arms. "Admitted" is the scheduling gate lifted (every gate gone),
// "bound" spec.nodeName set.
type PodRecord struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Workload  string `json:"workload"`
	Class     string `json:"class"`
	Queue     string `json:"queue"`
	Member    int    `json:"member"`
	Attempt   int    `json:"attempt"`
	// GPUs is the pod's nvidia.com/gpu request.
	GPUs int `json:"gpus"`
	// Created is when the create call returned; Seen the first watch
	// event (either may come first).
	Created time.Time `json:"created"`
	Seen    time.Time `json:"seen"`
	// Gated: the pod had a scheduling gate when first seen (the arm's
	// webhook put it there). A pod never gated is admitted when seen.
	Gated    bool      `json:"gated"`
	Admitted time.Time `json:"admitted"`
	Bound    time.Time `json:"bound"`
	Running  time.Time `json:"running"`
	// Unschedulable is when kube-scheduler first marked the pod
	// PodScheduled=False with reason Unschedulable (no node fits; a gated
	// pod's reason is SchedulingGated instead).
	Unschedulable time.Time `json:"unschedulable,omitzero"`
	// Ended is the first of phase Succeeded, phase Failed, or the pod
	// deleted; Succeeded says which.
	Ended     time.Time `json:"ended"`
	Succeeded bool      `json:"succeeded"`
	Node      string    `json:"node,omitempty"`
}

// Recorder watches the arena's pods (label WorkloadLabel) in every
// namespace and keeps a PodRecord per pod.
type Recorder struct {
	mu   sync.Mutex
	pods map[string]*PodRecord // namespace/name
	// members[workload] are the member slots with a Succeeded pod.
	members  map[string]map[int]bool
	want     map[string]int // workload -> pods
	complete int
	done     chan struct{}
	// onFailed is called (outside the lock, on the watch's goroutine) for
	// a pod that ended without succeeding, once.
	onFailed func(PodRecord)
	factory  informers.SharedInformerFactory
	cancel   context.CancelFunc
}

// StartRecorder watches until Stop (or ctx ends); Done is closed once
// every arrival's workload has a Succeeded pod in every member slot.
func StartRecorder(ctx context.Context, client kubernetes.Interface, arrivals []Arrival, onFailed func(PodRecord)) (*Recorder, error) {
	ctx, cancel := context.WithCancel(ctx)
	r := &Recorder{
		pods: map[string]*PodRecord{}, members: map[string]map[int]bool{}, want: map[string]int{},
		done: make(chan struct{}), onFailed: onFailed, cancel: cancel,
	}
	for _, a := range arrivals {
		r.want[a.Key()] = a.Pods
	}
	r.factory = informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = WorkloadLabel }))
	informer := r.factory.Core().V1().Pods().Informer()
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.observe(obj, false) },
		UpdateFunc: func(_, obj any) { r.observe(obj, false) },
		DeleteFunc: func(obj any) { r.observe(obj, true) },
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("recorder: %w", err)
	}
	r.factory.Start(ctx.Done())
	synced := func(context.Context) (bool, error) { return informer.HasSynced(), nil }
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, synced); err != nil {
		r.Stop()
		return nil, fmt.Errorf("recorder: pod informer did not sync: %w", err)
	}
	return r, nil
}

// Stop ends the watch and waits for it.
func (r *Recorder) Stop() {
	r.cancel()
	r.factory.Shutdown()
}

// Done is closed when every workload completed.
func (r *Recorder) Done() <-chan struct{} { return r.done }

// NoteCreated records when the create call of namespace/name returned.
func (r *Recorder) NoteCreated(namespace, name string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.record(namespace, name)
	if rec.Created.IsZero() {
		rec.Created = at
	}
}

// Records are copies of every pod's record.
func (r *Recorder) Records() []PodRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]PodRecord, 0, len(r.pods))
	for _, rec := range r.pods {
		out = append(out, *rec)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Progress is the number of complete workloads and of workloads.
func (r *Recorder) Progress() (complete, workloads int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.complete, len(r.want)
}

func (r *Recorder) record(namespace, name string) *PodRecord {
	key := namespace + "/" + name
	rec, ok := r.pods[key]
	if !ok {
		rec = &PodRecord{Namespace: namespace, Name: name}
		r.pods[key] = rec
	}
	return rec
}

func (r *Recorder) observe(obj any, deleted bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	r.mu.Lock()
	rec := r.record(pod.Namespace, pod.Name)
	failedNow := r.update(rec, pod, deleted, now)
	failed := *rec
	r.mu.Unlock()
	if failedNow && r.onFailed != nil {
		r.onFailed(failed)
	}
}

// podGPUs is pod's nvidia.com/gpu request, over its containers.
func podGPUs(pod *corev1.Pod) int {
	var n int64
	for _, c := range pod.Spec.Containers {
		if q, ok := c.Resources.Requests[cluster.GpuResource]; ok {
			n += q.Value()
		}
	}
	return int(n)
}

// update folds one observation into rec and reports whether the pod has
// just ended without succeeding.
func (r *Recorder) update(rec *PodRecord, pod *corev1.Pod, deleted bool, now time.Time) bool {
	if rec.Seen.IsZero() {
		rec.Seen = now
		rec.Gated = len(pod.Spec.SchedulingGates) > 0
		rec.Workload = pod.Namespace + "/" + pod.Labels[WorkloadLabel]
		rec.Class, rec.Queue = pod.Labels[ClassLabel], pod.Labels[QueueNameLabel]
		rec.Member, _ = strconv.Atoi(pod.Labels[MemberLabel])
		rec.Attempt, _ = strconv.Atoi(pod.Annotations[AttemptAnnotation])
		rec.GPUs = podGPUs(pod)
	}
	if rec.Admitted.IsZero() && len(pod.Spec.SchedulingGates) == 0 {
		rec.Admitted = now
	}
	if rec.Bound.IsZero() && pod.Spec.NodeName != "" {
		rec.Bound, rec.Node = now, pod.Spec.NodeName
	}
	if rec.Unschedulable.IsZero() && markedUnschedulable(pod) {
		rec.Unschedulable = now
	}
	if rec.Running.IsZero() && pod.Status.Phase == corev1.PodRunning {
		rec.Running = now
	}
	if !rec.Ended.IsZero() {
		return false
	}
	switch {
	case pod.Status.Phase == corev1.PodSucceeded:
		rec.Ended, rec.Succeeded = now, true
		r.memberSucceeded(rec)
		return false
	case pod.Status.Phase == corev1.PodFailed || deleted:
		rec.Ended = now
		return true
	}
	return false
}

// markedUnschedulable: kube-scheduler found no node for pod.
func markedUnschedulable(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

func (r *Recorder) memberSucceeded(rec *PodRecord) {
	slots := r.members[rec.Workload]
	if slots == nil {
		slots = map[int]bool{}
		r.members[rec.Workload] = slots
	}
	if slots[rec.Member] {
		return
	}
	slots[rec.Member] = true
	if want, ok := r.want[rec.Workload]; ok && len(slots) == want {
		r.complete++
		if r.complete == len(r.want) {
			close(r.done)
		}
	}
}
