package benchkit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
	"gpusched.io/e2e/suite/promtext"
)

// The benchmark's nodes and pods: registered, created, watched until bound
// and deleted between arms.

// ---- nodes ----

// CreateNodes registers n copies of the demo DGX H100 node, as
// a kubelet would (object, then status), from parallel workers.
func CreateNodes(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, client kubernetes.Interface, n, workers int) {
	b.Helper()
	template := NodeTemplate(b, cp.Repo)
	err := cluster.Parallel(n, workers, func(i int) error {
		node := NodeCopy(template, i)
		_, err := cluster.CreateNode(ctx, client, &node)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}

// NodeTemplate is dgx-h100-2: a DGX H100 whose topology is
// gpusched's documented default, so no large annotation is copied.
func NodeTemplate(b *testing.B, repo string) *corev1.Node {
	b.Helper()
	nodes, err := cluster.DemoNodes(repo)
	if err != nil {
		b.Fatal(err)
	}
	for i := range nodes {
		if nodes[i].Name == "dgx-h100-2" {
			return &nodes[i]
		}
	}
	b.Fatalf("%s has no node dgx-h100-2", cluster.DemoClusterFile)
	return nil
}

// NodeName is the name of generated node i.
func NodeName(i int) string { return fmt.Sprintf("bench-h100-%05d", i) }

func NodeCopy(template *corev1.Node, i int) corev1.Node {
	node := *template.DeepCopy()
	node.Name = NodeName(i)
	node.Labels["kubernetes.io/hostname"] = node.Name
	// A DGX SuperPOD rack holds 4 DGX nodes; a scalable unit 32.
	node.Labels["gpusched.io/rack"] = fmt.Sprintf("rack-%d", i/4)
	node.Labels["gpusched.io/block"] = fmt.Sprintf("block-%d", i/32)
	node.Spec.PodCIDR = fmt.Sprintf("10.%d.%d.0/24", 64+i/256, i%256)
	node.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.20.%d.%d", i/250, 1+i%250)},
		{Type: corev1.NodeHostName, Address: node.Name},
	}
	return node
}

// ---- pods ----

// tpPodCreation runs in the background; done closes when every create
// returned.
type tpPodCreation struct {
	done     chan struct{}
	mu       sync.Mutex
	err      error
	finished time.Time
}

func (c *tpPodCreation) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// createThroughputPods creates n single-GPU pods pod-00000... in namespace
// from parallel workers, each changed by mark (if not nil) first.
func createThroughputPods(ctx context.Context, client kubernetes.Interface, namespace string, n, workers int,
	mark func(*corev1.Pod, int)) *tpPodCreation {
	c := &tpPodCreation{done: make(chan struct{})}
	template := cluster.NewPod(namespace, "").SchedulerName(cluster.SchedulerName).Gpus(1).Build()
	go func() {
		defer close(c.done)
		err := cluster.Parallel(n, workers, func(i int) error {
			pod := template.DeepCopy()
			pod.Name = fmt.Sprintf("pod-%05d", i)
			if mark != nil {
				mark(pod, i)
			}
			_, err := client.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
			return err
		})
		c.mu.Lock()
		c.err, c.finished = err, time.Now()
		c.mu.Unlock()
	}()
	return c
}

// tpBindRecorder keeps when each pod was first seen with a node.
type tpBindRecorder struct {
	want        int
	bound       map[string]time.Time
	first, last time.Time
}

func (r *tpBindRecorder) observe(pod *corev1.Pod, at time.Time) {
	if pod.Spec.NodeName == "" {
		return
	}
	if _, seen := r.bound[pod.Name]; seen {
		return
	}
	r.bound[pod.Name] = at
	if r.first.IsZero() {
		r.first = at
	}
	r.last = at
}

func (r *tpBindRecorder) done() bool { return len(r.bound) >= r.want }

// tpWatchBinds watches the namespace from resourceVersion until every pod is
// bound, re-watching if the server ends the stream; check is called every
// half second and aborts the wait with its error.
func tpWatchBinds(ctx context.Context, client kubernetes.Interface, namespace, resourceVersion string,
	rec *tpBindRecorder, check func() error) error {
	for !rec.done() {
		w, err := client.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{
			ResourceVersion: resourceVersion, AllowWatchBookmarks: true,
		})
		if err != nil {
			return err
		}
		resourceVersion, err = tpDrainWatch(ctx, w, rec, check, resourceVersion)
		w.Stop()
		if err != nil {
			return err
		}
	}
	return nil
}

func tpDrainWatch(ctx context.Context, w watch.Interface, rec *tpBindRecorder, check func() error, rv string) (string, error) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for !rec.done() {
		select {
		case <-ctx.Done():
			return rv, ctx.Err()
		case <-tick.C:
			if err := check(); err != nil {
				return rv, err
			}
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv, nil // the server ended the watch: resume from rv
			}
			if ev.Type == watch.Error {
				return rv, apierrors.FromObject(ev.Object)
			}
			if pod, ok := ev.Object.(*corev1.Pod); ok {
				rv = pod.ResourceVersion
				rec.observe(pod, time.Now())
			}
		}
	}
	return rv, nil
}

func tpCountGpuIDs(ctx context.Context, b *testing.B, client kubernetes.Interface, namespace string) int {
	b.Helper()
	list, err := client.CoreV1().Pods(namespace).List(context.WithoutCancel(ctx), metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for i := range list.Items {
		if _, ok := list.Items[i].Annotations[cluster.GpuIDsAnnotation]; ok {
			n++
		}
	}
	return n
}

// DeletePods deletes the arm's pods at once (grace 0: there is no
// kubelet to confirm) and waits until the apiserver and gpusched's model
// have no trace of them.
func DeletePods(ctx context.Context, b *testing.B, cp *controlplane.ControlPlane, client kubernetes.Interface, namespace string) {
	b.Helper()
	zero := int64(0)
	err := client.CoreV1().Pods(namespace).DeleteCollection(ctx,
		metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var left int
	var inUse float64
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return false, nil
		}
		left = len(list.Items)
		text, err := cp.GpuschedMetrics()
		if err != nil {
			return false, nil
		}
		m := promtext.Parse(text)
		inUse = m.Sum("gpusched_gpus", map[string]string{"state": "used"}) +
			m.Sum("gpusched_gpus", map[string]string{"state": "shared"})
		return left == 0 && inUse == 0, nil
	})
	if err != nil {
		b.Fatalf("after deleting the pods of %s: %d left, gpusched still counts %v GPUs in use: %v", namespace, left, inUse, err)
	}
}
