package suite_test

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

const (
	chaosQueue    = "team-a"
	chaosQuota    = 64
	chaosSingles  = 160 // single-GPU pods
	chaosGangs    = 16  // Kueue pod groups of chaosGangSize x chaosGangGpus
	chaosGangSize = 4
	chaosGangGpus = 2
	chaosFaults   = 6
)

// chaosPod is one pod of the plan; pause is how long the creator waits
// after creating it.
type chaosPod struct {
	name, group string
	gpus        int
	runFor      time.Duration
	pause       time.Duration
}

// chaosBindOutage is a fault of its own: kube-scheduler is killed, and
// gpusched `down` later, so that it dies while the pods it admitted in the
// meantime wait for their binds (issue 21).
const chaosBindOutage = "kube-scheduler+gpusched"

// chaosFault kills one component (controlplane.Gpusched, KubeAPIServer,
// Etcd, or chaosBindOutage) at `at` after the first pod's creation, or as
// soon as the previous fault's component is back, and starts it again
// `down` later.
type chaosFault struct {
	kind     string
	at, down time.Duration
}

type chaosPlan struct {
	seed   uint64
	pods   []chaosPod
	faults []chaosFault
}

// chaosSeed reads CHAOS_SEED (default 1).
func chaosSeed(t *testing.T) uint64 {
	t.Helper()
	text := os.Getenv("CHAOS_SEED")
	if text == "" {
		return 1
	}
	seed, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		t.Fatalf("CHAOS_SEED=%q: %v", text, err)
	}
	return seed
}

// newChaosPlan draws the plan from the seed alone.
func newChaosPlan(seed uint64) *chaosPlan {
	rng := rand.New(rand.NewPCG(seed, 0x67707573636865)) // "gpusche"
	return &chaosPlan{seed: seed, pods: chaosPods(rng), faults: chaosFaultPlan(rng)}
}

// chaosPods: singles and gangs in a shuffled order, each running 2-4 s.
// The creator pauses now and then (0.1-0.9 s), also between the members
// of a gang, so gangs arrive over several events, some across an outage.
func chaosPods(rng *rand.Rand) []chaosPod {
	workloads := make([]int, 0, chaosSingles+chaosGangs) // >= 0: single; < 0: gang
	for i := range chaosSingles {
		workloads = append(workloads, i)
	}
	for g := range chaosGangs {
		workloads = append(workloads, -1-g)
	}
	rng.Shuffle(len(workloads), func(i, j int) { workloads[i], workloads[j] = workloads[j], workloads[i] })
	var pods []chaosPod
	for _, w := range workloads {
		runFor := time.Duration(2000+rng.IntN(2001)) * time.Millisecond
		if w >= 0 {
			pods = append(pods, chaosPod{name: fmt.Sprintf("single-%03d", w), gpus: 1, runFor: runFor, pause: chaosPause(rng, 0.15)})
			continue
		}
		group := fmt.Sprintf("gang-%02d", -1-w)
		for i := range chaosGangSize {
			pods = append(pods, chaosPod{name: fmt.Sprintf("%s-%d", group, i), group: group, gpus: chaosGangGpus,
				runFor: runFor, pause: chaosPause(rng, 0.3)})
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
func chaosFaultPlan(rng *rand.Rand) []chaosFault {
	kinds := []string{controlplane.Gpusched, controlplane.KubeAPIServer, controlplane.Etcd, chaosBindOutage}
	for len(kinds) < chaosFaults {
		kinds = append(kinds, kinds[rng.IntN(4)])
	}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	var faults []chaosFault
	at := time.Duration(1000+rng.IntN(3001)) * time.Millisecond
	for _, kind := range kinds {
		down := time.Duration(200+rng.IntN(2301)) * time.Millisecond
		if kind == chaosBindOutage { // long enough for pods to finish and others to be admitted
			down = time.Duration(1000+rng.IntN(3001)) * time.Millisecond
		}
		faults = append(faults, chaosFault{kind: kind, at: at, down: down})
		at += time.Duration(3000+rng.IntN(5001)) * time.Millisecond
	}
	return faults
}

func (p *chaosPlan) String() string {
	var faults []string
	for _, f := range p.faults {
		faults = append(faults, fmt.Sprintf("%s@%v/%v", f.kind, f.at.Round(10*time.Millisecond), f.down.Round(10*time.Millisecond)))
	}
	gpus := 0
	for _, pod := range p.pods {
		gpus += pod.gpus
	}
	return fmt.Sprintf("%d pods asking %d GPUs in all (first %s, %s, %s); faults kind@at/down: %s",
		len(p.pods), gpus, p.pods[0].name, p.pods[1].name, p.pods[2].name, strings.Join(faults, " "))
}

// chaosCreator creates the plan's pods in order from its own goroutine,
// retrying each until it exists: during an outage creations fail (or their
// answer is lost, so AlreadyExists counts as created).
type chaosCreator struct {
	done    chan struct{}
	created atomic.Int64
	ungated atomic.Int64 // created while gpusched's webhook was down
	retries atomic.Int64
	mu      sync.Mutex
	err     error
}

func startChaosCreator(ctx context.Context, client kubernetes.Interface, plan *chaosPlan) *chaosCreator {
	c := &chaosCreator{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for _, pod := range plan.pods {
			if err := c.create(ctx, client, pod); err != nil {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
				return
			}
			time.Sleep(pod.pause)
		}
	}()
	return c
}

func (c *chaosCreator) create(ctx context.Context, client kubernetes.Interface, pod chaosPod) error {
	b := gpuPod(pod.name, pod.gpus).Label("kueue.x-k8s.io/queue-name", chaosQueue).RunFor(pod.runFor)
	if pod.group != "" {
		b = b.Label("kueue.x-k8s.io/pod-group-name", pod.group).
			Annotation("kueue.x-k8s.io/pod-group-total-count", fmt.Sprint(chaosGangSize))
	}
	for {
		// A request to an API server waiting for etcd hangs: bound it.
		reqCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		created, err := b.Create(reqCtx, client)
		cancel()
		switch {
		case err == nil:
			c.created.Add(1)
			if len(created.Spec.SchedulingGates) == 0 {
				c.ungated.Add(1)
			}
			return nil
		case apierrors.IsAlreadyExists(err):
			c.created.Add(1)
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("%s not created: %w", pod.name, err)
		}
		c.retries.Add(1)
		time.Sleep(200 * time.Millisecond)
	}
}

// wait waits until every pod was created (or the creator gave up).
func (c *chaosCreator) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(timeout):
		t.Fatalf("pods still being created after %v (%d created)", timeout, c.created.Load())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		t.Fatal(c.err)
	}
}
