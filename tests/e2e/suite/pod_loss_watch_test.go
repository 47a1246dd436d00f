package suite_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// podLossWatch follows one namespace's pods through an informer and records
// every pod that is lost: deleted, or marked for deletion, before it
// succeeded. The tests using it have no preemption (one queue, one
// priority) and nothing else deletes their pods, so each loss is a pod
// gpusched evicted or otherwise threw away.
//
// An informer, not a bare watch: its reflector reconnects after a killed
// API server and lists again after a 410 Gone, and a pod deleted while the
// watch was down still comes out of that list as a deletion (a
// DeletedFinalStateUnknown tombstone), so no loss is missed across faults.
type podLossWatch struct {
	factory informers.SharedInformerFactory
	lister  corelisters.PodLister
	stopCh  chan struct{}
	once    sync.Once

	mu     sync.Mutex
	uids   map[string]types.UID // pod name -> the UID first seen
	losses []podLoss
	lost   map[types.UID]bool
}

// podLoss is one lost pod: its UID, and when and how it was lost.
type podLoss struct {
	uid  types.UID
	text string
}

// startPodLossWatch starts the informer and waits (up to 30 s) for its
// first list.
func startPodLossWatch(client kubernetes.Interface, namespace string) (*podLossWatch, error) {
	w := &podLossWatch{stopCh: make(chan struct{}), uids: map[string]types.UID{}, lost: map[types.UID]bool{}}
	w.factory = informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace))
	informer := w.factory.Core().V1().Pods()
	w.lister = informer.Lister()
	_, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.seen(obj.(*corev1.Pod)) },
		UpdateFunc: func(_, obj any) { w.seen(obj.(*corev1.Pod)) },
		DeleteFunc: w.deleted,
	})
	if err != nil {
		return nil, err
	}
	w.factory.Start(w.stopCh)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), informer.Informer().HasSynced) {
		w.stop()
		return nil, fmt.Errorf("pod watch of %s did not sync", namespace)
	}
	return w, nil
}

func (w *podLossWatch) stop() {
	w.once.Do(func() {
		close(w.stopCh)
		w.factory.Shutdown()
	})
}

// seen checks an added or updated pod: a deletion mark on an unfinished
// pod is a loss, and so is a second UID under a known name (the first pod
// of that name was deleted, and something created it again).
func (w *podLossWatch) seen(p *corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if first, ok := w.uids[p.Name]; !ok {
		w.uids[p.Name] = p.UID
	} else if first != p.UID {
		w.lose(p, fmt.Sprintf("pod %s exists with UID %s, first seen with UID %s: it was deleted and made again", p.Name, p.UID, first))
	}
	if p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded {
		w.lose(p, fmt.Sprintf("pod %s (%s, node %q) marked for deletion at %s", p.Name, p.Status.Phase,
			p.Spec.NodeName, p.DeletionTimestamp.Format("15:04:05")))
	}
}

func (w *podLossWatch) deleted(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok || p.Status.Phase == corev1.PodSucceeded {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lose(p, fmt.Sprintf("pod %s (%s, node %q, assigned %q) deleted", p.Name, p.Status.Phase,
		p.Spec.NodeName, p.Annotations["gpusched.io/assigned-node"]))
}

// lose records a loss, once per pod UID.
func (w *podLossWatch) lose(p *corev1.Pod, what string) {
	if w.lost[p.UID] {
		return
	}
	w.lost[p.UID] = true
	w.losses = append(w.losses, podLoss{uid: p.UID, text: time.Now().Format("15:04:05.000 ") + what})
}

// Losses returns every loss so far, in the order seen.
func (w *podLossWatch) Losses() []podLoss {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]podLoss(nil), w.losses...)
}

// lossTexts is each loss's description.
func lossTexts(losses []podLoss) []string {
	texts := make([]string, len(losses))
	for i, l := range losses {
		texts[i] = l.text
	}
	return texts
}

// Pods returns the namespace's pods as the watch has them now: a state
// the API server had at some point (events apply in order), possibly a
// little behind, and frozen while the watch is down.
func (w *podLossWatch) Pods() []corev1.Pod {
	list, _ := w.lister.List(labels.Everything())
	pods := make([]corev1.Pod, 0, len(list))
	for _, p := range list {
		pods = append(pods, *p)
	}
	return pods
}
