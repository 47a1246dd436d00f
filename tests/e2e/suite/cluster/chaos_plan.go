package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"

	"gpusched.io/e2e/suite/controlplane"
)

// The chaos test's seeded plan (which pods, in which order and rhythm;
// which component dies when, for how long) and the goroutine that creates
// the pods through every outage.

// ChaosQueue is the chaos test's LocalQueue (and ClusterQueue), of
// ChaosQuota GPUs.
const (
	ChaosQueue    = "team-a"
	ChaosQuota    = 64
	chaosSingles  = 160 // single-GPU pods
	chaosGangs    = 16  // Kueue pod groups of chaosGangSize x chaosGangGpus
	chaosGangSize = 4
	chaosGangGpus = 2
	chaosFaults   = 6
)

// ChaosPod is one pod of the plan, of Group if it is a gang's; Pause is
// how long the creator waits after creating it.
type ChaosPod struct {
	Name, Group string
	Gpus        int
	RunFor      time.Duration
	Pause       time.Duration
}

// ChaosBindOutage is a fault of its own: kube-scheduler is killed, and
// gpusched `down` later, so that it dies while the pods it admitted in the
// meantime wait for their binds (issue 21).
const ChaosBindOutage = "kube-scheduler+gpusched"

// ChaosFault kills one component (controlplane.Gpusched, KubeAPIServer,
// Etcd, or ChaosBindOutage) At after the first pod's creation, or as
// soon as the previous fault's component is back, and starts it again
// Down later.
type ChaosFault struct {
	Kind     string
	At, Down time.Duration
}

// ChaosPlan is what one seed makes of the chaos test: its pods in order
// of creation, and its faults in order.
type ChaosPlan struct {
	Seed   uint64
	Pods   []ChaosPod
	Faults []ChaosFault
}

// ChaosSeed reads CHAOS_SEED (default 1).
func ChaosSeed(tb testing.TB) uint64 {
	tb.Helper()
	text := os.Getenv("CHAOS_SEED")
	if text == "" {
		return 1
	}
	seed, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		tb.Fatalf("CHAOS_SEED=%q: %v", text, err)
	}
	return seed
}

// NewChaosPlan draws the plan from the seed alone.
func NewChaosPlan(seed uint64) *ChaosPlan {
	rng := rand.New(rand.NewPCG(seed, 0x67707573636865)) // "gpusche"
	return &ChaosPlan{Seed: seed, Pods: chaosPods(rng), Faults: chaosFaultPlan(rng)}
}

// chaosPods: singles and gangs in a shuffled order, each running 2-4 s.
// The creator pauses now and then (0.1-0.9 s), also between the members
// of a gang, so gangs arrive over several events, some across an outage.
func chaosPods(rng *rand.Rand) []ChaosPod {
	workloads := make([]int, 0, chaosSingles+chaosGangs) // >= 0: single; < 0: gang
	for i := range chaosSingles {
		workloads = append(workloads, i)
	}
	for g := range chaosGangs {
		workloads = append(workloads, -1-g)
	}
	rng.Shuffle(len(workloads), func(i, j int) { workloads[i], workloads[j] = workloads[j], workloads[i] })
	var pods []ChaosPod
	for _, w := range workloads {
		runFor := time.Duration(2000+rng.IntN(2001)) * time.Millisecond
		if w >= 0 {
			pods = append(pods, ChaosPod{Name: fmt.Sprintf("single-%03d", w), Gpus: 1, RunFor: runFor, Pause: chaosPause(rng, 0.15)})
			continue
		}
		group := fmt.Sprintf("gang-%02d", -1-w)
		for i := range chaosGangSize {
			pods = append(pods, ChaosPod{Name: fmt.Sprintf("%s-%d", group, i), Group: group, Gpus: chaosGangGpus,
				RunFor: runFor, Pause: chaosPause(rng, 0.3)})
		}
	}
	return pods
}

func chaosPause(rng *rand.Rand, p float64) time.Duration {
	if rng.Float64() >= p {
		return 0
	}
	return time.Duration(100+rng.IntN(801)) * time.Millisecond
}

// chaosFaultPlan: each kind of fault once, the rest drawn, in a shuffled
// order, 3-8 s apart, each component down 0.2-2.5 s (kube-scheduler 1-4 s
// before gpusched is killed too).
func chaosFaultPlan(rng *rand.Rand) []ChaosFault {
	kinds := []string{controlplane.Gpusched, controlplane.KubeAPIServer, controlplane.Etcd, ChaosBindOutage}
	for len(kinds) < chaosFaults {
		kinds = append(kinds, kinds[rng.IntN(4)])
	}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	var faults []ChaosFault
	at := time.Duration(1000+rng.IntN(3001)) * time.Millisecond
	for _, kind := range kinds {
		down := time.Duration(200+rng.IntN(2301)) * time.Millisecond
		if kind == ChaosBindOutage { // long enough for pods to finish and others to be admitted
			down = time.Duration(1000+rng.IntN(3001)) * time.Millisecond
		}
		faults = append(faults, ChaosFault{Kind: kind, At: at, Down: down})
		at += time.Duration(3000+rng.IntN(5001)) * time.Millisecond
	}
	return faults
}

// String is the plan in one line for the test's log: its pods in short,
// its faults as kind@at/down.
func (p *ChaosPlan) String() string {
	var faults []string
	for _, f := range p.Faults {
		faults = append(faults, fmt.Sprintf("%s@%v/%v", f.Kind, f.At.Round(10*time.Millisecond), f.Down.Round(10*time.Millisecond)))
	}
	gpus := 0
	for _, pod := range p.Pods {
		gpus += pod.Gpus
	}
	return fmt.Sprintf("%d pods asking %d GPUs in all (first %s, %s, %s); faults kind@at/down: %s",
		len(p.Pods), gpus, p.Pods[0].Name, p.Pods[1].Name, p.Pods[2].Name, strings.Join(faults, " "))
}

// ChaosCreator creates the plan's pods in order from its own goroutine,
// retrying each until it exists: during an outage creations fail (or their
// answer is lost, so AlreadyExists counts as created).
type ChaosCreator struct {
	done chan struct{}
	// Created counts the pods created so far; Ungated those created while
	// gpusched's webhook was down; Retries the creations retried.
	Created atomic.Int64
	Ungated atomic.Int64
	Retries atomic.Int64
	mu      sync.Mutex
	err     error
}

// StartChaosCreator starts creating the plan's pods; ctx's end stops it.
func StartChaosCreator(ctx context.Context, client kubernetes.Interface, plan *ChaosPlan) *ChaosCreator {
	c := &ChaosCreator{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for _, pod := range plan.Pods {
			if err := c.create(ctx, client, pod); err != nil {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
				return
			}
			time.Sleep(pod.Pause)
		}
	}()
	return c
}

func (c *ChaosCreator) create(ctx context.Context, client kubernetes.Interface, pod ChaosPod) error {
	b := GpuPod(pod.Name, pod.Gpus).Label("kueue.x-k8s.io/queue-name", ChaosQueue).RunFor(pod.RunFor)
	if pod.Group != "" {
		b = b.Label("kueue.x-k8s.io/pod-group-name", pod.Group).
			Annotation("kueue.x-k8s.io/pod-group-total-count", fmt.Sprint(chaosGangSize))
	}
	for {
		// A request to an API server waiting for etcd hangs: bound it.
		reqCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		created, err := b.Create(reqCtx, client)
		cancel()
		switch {
		case err == nil:
			c.Created.Add(1)
			if len(created.Spec.SchedulingGates) == 0 {
				c.Ungated.Add(1)
			}
			return nil
		case apierrors.IsAlreadyExists(err):
			c.Created.Add(1)
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("%s not created: %w", pod.Name, err)
		}
		c.Retries.Add(1)
		time.Sleep(200 * time.Millisecond)
	}
}

// Wait waits until every pod was created (or the creator gave up).
func (c *ChaosCreator) Wait(tb testing.TB, timeout time.Duration) {
	tb.Helper()
	select {
	case <-c.done:
	case <-time.After(timeout):
		tb.Fatalf("pods still being created after %v (%d created)", timeout, c.Created.Load())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		tb.Fatal(c.err)
	}
}
