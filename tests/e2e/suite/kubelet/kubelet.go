// Package kubelet plays the kubelet for pods bound in a control plane with
// no nodes behind it, as kwok does: bound pods start running, deleted pods
// go away, and pods annotated with a run time finish.
package kubelet

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// RunForAnnotation on a pod is how long it runs (a Go duration, e.g. "3s")
// before the fake kubelet marks it Succeeded. Without it a pod runs forever.
const RunForAnnotation = "e2e.gpusched.io/run-for"

// ReadyAfterAnnotation on a pod is how long after it starts running its
// containers become Ready (a Go duration): until then it is Running with
// condition Ready False, as a pod whose readiness probe has not passed
// yet (a slow image, a model still loading). Without it a running pod is
// Ready at once. Its run-for counts from the start, not from Ready.
const ReadyAfterAnnotation = "e2e.gpusched.io/ready-after"

// syncTimeout bounds the wait for the pod informer's first list.
const syncTimeout = 30 * time.Second

// FakeKubelet is the running fake; Stop it (or cancel its context).
type FakeKubelet struct {
	client  kubernetes.Interface
	pods    corelisters.PodLister
	queue   workqueue.TypedRateLimitingInterface[string]
	factory informers.SharedInformerFactory
	cancel  context.CancelFunc
	workers sync.WaitGroup
	logMu   sync.Mutex
	log     io.Writer

	// started is when this kubelet marked each pod Running: status
	// startTime has whole seconds only, too coarse for run-for.
	startedMu sync.Mutex
	started   map[types.UID]time.Time

	// failDeleted: see WithTerminalPhaseOnDeletion.
	failDeleted bool
}

// Option configures StartFakeKubelet.
type Option func(*FakeKubelet)

// WithLog writes one line per action (and per error) to w.
func WithLog(w io.Writer) Option { return func(k *FakeKubelet) { k.log = w } }

// WithTerminalPhaseOnDeletion makes a terminating pod Failed (its
// containers killed) before it is deleted, as a real kubelet reports a
// deleted pod's end (and PodGC an unbound one's). Controllers that keep a
// finalizer on their pods, such as the Job controller with a
// podFailurePolicy, wait for that phase before they let the pod go.
func WithTerminalPhaseOnDeletion() Option { return func(k *FakeKubelet) { k.failDeleted = true } }

// StartFakeKubelet watches pods in all namespaces until ctx ends or Stop.
// It returns once its informer has listed the pods.
func StartFakeKubelet(ctx context.Context, client kubernetes.Interface, opts ...Option) (*FakeKubelet, error) {
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Core().V1().Pods()
	k := &FakeKubelet{
		client:  client,
		pods:    informer.Lister(),
		queue:   workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		factory: factory,
		cancel:  cancel,
		log:     io.Discard,
		started: map[types.UID]time.Time{},
	}
	for _, opt := range opts {
		opt(k)
	}
	_, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    k.enqueue,
		UpdateFunc: func(_, obj any) { k.enqueue(obj) },
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("fake kubelet: %w", err)
	}
	factory.Start(ctx.Done())
	// Polled more often than cache.WaitForCacheSync's 100 ms: this is on
	// every control plane's start-up path.
	synced := func(context.Context) (bool, error) { return informer.Informer().HasSynced(), nil }
	if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, syncTimeout, true, synced); err != nil {
		k.Stop()
		return nil, fmt.Errorf("fake kubelet: pod informer did not sync: %w", err)
	}
	go func() { <-ctx.Done(); k.queue.ShutDown() }()
	for range 2 {
		k.workers.Add(1)
		go k.work(ctx)
	}
	return k, nil
}

// Stop ends the fake kubelet and waits for its goroutines.
func (k *FakeKubelet) Stop() {
	k.cancel()
	k.queue.ShutDown()
	k.workers.Wait()
	k.factory.Shutdown()
}

func (k *FakeKubelet) logf(format string, args ...any) {
	k.logMu.Lock()
	defer k.logMu.Unlock()
	fmt.Fprintf(k.log, time.Now().Format("15:04:05.000")+" "+format+"\n", args...)
}

func (k *FakeKubelet) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		k.queue.Add(key)
	}
}

func (k *FakeKubelet) work(ctx context.Context) {
	defer k.workers.Done()
	for {
		key, shutdown := k.queue.Get()
		if shutdown {
			return
		}
		if err := k.sync(ctx, key); err != nil && ctx.Err() == nil {
			k.logf("%s: %v (retrying)", key, err)
			k.queue.AddRateLimited(key)
		} else {
			k.queue.Forget(key)
		}
		k.queue.Done(key)
	}
}

// sync does what a kubelet would do next for the pod, from the informer's
// view of it; writes re-read the latest object on conflict.
func (k *FakeKubelet) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := k.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	switch {
	case pod.DeletionTimestamp != nil:
		return k.finishDeletion(ctx, pod)
	case pod.Spec.NodeName == "":
		return nil
	case pod.Status.Phase == corev1.PodPending && pod.Annotations[ReadyAfterAnnotation] != "":
		return k.updateStatus(ctx, pod, corev1.PodPending, markRunningNotReady)
	case pod.Status.Phase == corev1.PodPending:
		return k.updateStatus(ctx, pod, corev1.PodPending, markRunning)
	case pod.Status.Phase == corev1.PodRunning && !podReady(pod) && pod.Annotations[ReadyAfterAnnotation] != "":
		return k.readyWhenDue(ctx, key, pod)
	case pod.Status.Phase == corev1.PodRunning && pod.Annotations[RunForAnnotation] != "":
		return k.finishWhenDue(ctx, key, pod)
	}
	return nil
}

// readyWhenDue marks a running pod Ready once its ready-after has passed
// since it started (a bad value: Ready at once, said in the log), unless
// its run-for ends first: then it finishes without ever being Ready.
func (k *FakeKubelet) readyWhenDue(ctx context.Context, key string, pod *corev1.Pod) error {
	after, err := time.ParseDuration(pod.Annotations[ReadyAfterAnnotation])
	if err != nil {
		k.logf("%s: bad %s: %v (ready at once)", key, ReadyAfterAnnotation, err)
		after = 0
	}
	started := k.startedAt(pod)
	left := time.Until(started.Add(after))
	if runFor, err := time.ParseDuration(pod.Annotations[RunForAnnotation]); err == nil && runFor < after {
		return k.finishWhenDue(ctx, key, pod)
	}
	if left > 0 {
		k.queue.AddAfter(key, left)
		return nil
	}
	return k.updateStatus(ctx, pod, corev1.PodRunning, markReady)
}

// finishDeletion deletes a terminating pod at once: its containers "stop"
// immediately, so preemption and eviction victims really go away.
func (k *FakeKubelet) finishDeletion(ctx context.Context, pod *corev1.Pod) error {
	if k.failDeleted && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		// The update brings the pod back through the queue, Failed.
		return k.writeStatus(ctx, pod, func(p *corev1.Pod) bool {
			return p.DeletionTimestamp != nil && p.Status.Phase == pod.Status.Phase
		}, markKilled)
	}
	zero := int64(0)
	err := k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero,
		Preconditions:      &metav1.Preconditions{UID: &pod.UID},
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) { // gone, or a new pod of that name
		return nil
	}
	if err == nil {
		k.startedMu.Lock()
		delete(k.started, pod.UID)
		k.startedMu.Unlock()
		k.logf("%s/%s: terminated and deleted (node %s)", pod.Namespace, pod.Name, pod.Spec.NodeName)
	}
	return err
}

func (k *FakeKubelet) finishWhenDue(ctx context.Context, key string, pod *corev1.Pod) error {
	runFor, err := time.ParseDuration(pod.Annotations[RunForAnnotation])
	if err != nil {
		k.logf("%s: bad %s: %v (runs forever)", key, RunForAnnotation, err)
		return nil
	}
	started := k.startedAt(pod)
	if left := time.Until(started.Add(runFor)); left > 0 {
		k.queue.AddAfter(key, left)
		return nil
	}
	return k.updateStatus(ctx, pod, corev1.PodRunning, markSucceeded)
}

// updateStatus applies mutate to the latest pod through the status
// subresource, if the pod is still bound, not terminating and in phase from.
func (k *FakeKubelet) updateStatus(ctx context.Context, pod *corev1.Pod, from corev1.PodPhase, mutate func(*corev1.Pod, metav1.Time)) error {
	return k.writeStatus(ctx, pod, func(p *corev1.Pod) bool {
		return p.Status.Phase == from && p.DeletionTimestamp == nil && p.Spec.NodeName != ""
	}, mutate)
}

// writeStatus applies mutate to the latest pod of the same UID through the
// status subresource while applies holds for it.
func (k *FakeKubelet) writeStatus(ctx context.Context, pod *corev1.Pod, applies func(*corev1.Pod) bool, mutate func(*corev1.Pod, metav1.Time)) error {
	from := pod.Status.Phase
	latest := pod.DeepCopy()
	for attempt := 0; ; attempt++ {
		if latest.UID != pod.UID || !applies(latest) {
			return nil
		}
		now := metav1.Now()
		mutate(latest, now)
		_, err := k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, latest, metav1.UpdateOptions{})
		if err == nil {
			k.recordPhase(latest, now.Time)
			k.logf("%s/%s: %s -> %s (node %s)", pod.Namespace, pod.Name, from, latest.Status.Phase, pod.Spec.NodeName)
			return nil
		}
		if !apierrors.IsConflict(err) || attempt >= 5 {
			return fmt.Errorf("%s/%s status %s: %w", pod.Namespace, pod.Name, from, err)
		}
		latest, err = k.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// recordPhase remembers when a pod started running, and forgets it once
// it finished.
func (k *FakeKubelet) recordPhase(pod *corev1.Pod, at time.Time) {
	k.startedMu.Lock()
	defer k.startedMu.Unlock()
	if pod.Status.Phase == corev1.PodRunning {
		k.started[pod.UID] = at
	} else {
		delete(k.started, pod.UID)
	}
}

// startedAt is when the pod started running: as recorded, else from its
// status (a pod this kubelet did not start).
func (k *FakeKubelet) startedAt(pod *corev1.Pod) time.Time {
	k.startedMu.Lock()
	defer k.startedMu.Unlock()
	if at, ok := k.started[pod.UID]; ok {
		return at
	}
	if pod.Status.StartTime != nil {
		return pod.Status.StartTime.Time
	}
	return pod.CreationTimestamp.Time
}
