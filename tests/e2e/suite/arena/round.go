package arena

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Round is one arm's run of a scenario: its measures and the conditions
// they were taken in.
type Round struct {
	Scenario    string  `json:"scenario"`
	ScaleFactor float64 `json:"scale_factor"`
	Arm         string  `json:"arm"`
	Round       int     `json:"round"`
	// Error is why the round is incomplete ("" when every workload
	// finished and every create succeeded).
	Error         string             `json:"error,omitempty"`
	Measures      Measures           `json:"measures"`
	Processes     map[string]Process `json:"processes"`
	MachineBefore Machine            `json:"machine_before"`
	MachineAfter  Machine            `json:"machine_after"`
	Versions      map[string]string  `json:"versions"`
	Config        map[string]string  `json:"config"`
	// SetupSeconds: the control plane, the arm and the nodes.
	SetupSeconds float64 `json:"setup_seconds"`
	// Pods are every pod's record, times in ms from the start.
	Pods []PodTimes `json:"pods,omitempty"`
	// Provisioning: the ProvisioningRequests the arm created and what the
	// test provisioner answered (scenarios with a provisioner).
	Provisioning []ProvisionRecord `json:"provisioning,omitempty"`
	// FigureValues are Figures() as the report took them (set by NewReport).
	FigureValues map[string]float64 `json:"figures,omitempty"`
}

// RoundOptions: which round this is, and whether to keep every pod's
// record in the Round.
type RoundOptions struct {
	Round    int
	KeepPods bool
	// Progress, if set, is called every 10 s during the replay.
	Progress func(complete, workloads int, elapsed time.Duration)
}

// replayQPS is the replay's client limit, far above what it sends: its
// creates go out when due, and the API server's own pace is measured.
const replayQPS = 2000

// RunRound starts arm on a fresh control plane, creates the scenario's
// nodes, replays its arrivals and waits until every workload finished or
// the scenario's timeout, and measures. Faults of the set-up fail t; an
// incomplete replay is the Round's Error.
func RunRound(t testing.TB, arm Arm, s *Scenario, opts RoundOptions) Round {
	t.Helper()
	began := time.Now()
	c := arm.Start(t, s)
	timeout, _ := s.TimeoutDuration()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+2*time.Minute)
	defer cancel()
	if err := CreateScenarioNodes(ctx, c.CP.Client, c.CP.Repo, s); err != nil {
		t.Fatal(err)
	}
	nodeCount, _ := s.Nodes.Total()
	c.NodesSeen(ctx, t, nodeCount)
	arrivals := s.Arrivals()
	if err := waitGating(ctx, c.CP.Client, arrivals[0].Pod(0, 0, c.SchedulerName)); err != nil {
		t.Fatal(err)
	}
	info, err := ParsePolicy(s.Policy)
	if err != nil {
		t.Fatal(err)
	}
	round := Round{
		Scenario: s.Name, ScaleFactor: s.Scale.Factor, Arm: c.Arm, Round: opts.Round,
		Versions: versions(c.CP), Config: c.Config, SetupSeconds: time.Since(began).Seconds(),
	}
	replayer := NewReplayer(replayClient(t, c.CP.RestConfig), c.SchedulerName, arrivals)
	rec, err := StartRecorder(ctx, c.CP.Client, arrivals, replayer.Replace)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()
	in := replay(ctx, c, s, arrivals, replayer, rec, &round, opts)
	in.Policy, in.Arrivals, in.Pods = info, arrivals, rec.Records()
	_, in.ClusterGPUs = s.Nodes.Total()
	in.NodeLabels, in.DomainLabel = NodeLabels(s), s.DomainLabel
	round.Measures = Compute(in)
	if opts.KeepPods {
		round.Pods = podTimes(in.Pods, in.Start)
	}
	return round
}

// replay runs the arrivals until every workload finished or the timeout,
// and fills round's processes, machine and error.
func replay(ctx context.Context, c *ArmCluster, s *Scenario, arrivals []Arrival, replayer *Replayer, rec *Recorder,
	round *Round, opts RoundOptions) MeasureInput {
	timeout, _ := s.TimeoutDuration()
	runCtx, stop := context.WithTimeout(ctx, timeout)
	defer stop()
	pids := c.Pids()
	pids[SelfProcess] = os.Getpid()
	round.MachineBefore = machineNow()
	before := snapshotCPU(pids)
	start := time.Now()
	var prov *provisioner
	if s.Provisioner != nil {
		var err error
		if prov, err = startProvisioner(runCtx, c.CP.RestConfig, *s.Provisioner, start); err != nil {
			round.Error = fmt.Sprintf("provisioner: %v", err)
		}
	}
	go func() { _ = replayer.Run(runCtx, rec, start, arrivals) }()
	waitDone(runCtx, rec, start, opts.Progress)
	end := time.Now()
	after := snapshotCPU(pids)
	round.MachineAfter = machineNow()
	round.Processes = processes(pids, before, after)
	stop()
	replayer.Wait()
	if prov != nil {
		round.Provisioning = prov.Records()
	}
	lags, replacements, err := replayer.Stats()
	if complete, workloads := rec.Progress(); complete < workloads {
		round.Error = fmt.Sprintf("%d of %d workloads finished within %s", complete, workloads, s.Timeout)
	}
	if err != nil {
		round.Error += fmt.Sprintf("; replay: %v", err)
	}
	return MeasureInput{Start: start, End: end, Lags: lags, Replacements: replacements}
}

func waitDone(ctx context.Context, rec *Recorder, start time.Time, progress func(int, int, time.Duration)) {
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-rec.Done():
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			if progress != nil {
				complete, workloads := rec.Progress()
				progress(complete, workloads, time.Since(start))
			}
		}
	}
}

// waitGating waits until the arm's admission webhook gates a pod like
// probe (a dry-run create: nothing is stored). gpusched writes its
// webhook's caBundle after it starts, and the API server calls a webhook
// it cannot reach as failurePolicy says (gpusched's: Ignore), so the
// first pods could otherwise go ungated.
func waitGating(ctx context.Context, client kubernetes.Interface, probe *corev1.Pod) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		out, err := client.CoreV1().Pods(probe.Namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = fmt.Sprintf("gates %v", out.Spec.SchedulingGates)
		return len(out.Spec.SchedulingGates) > 0, nil
	})
	if err != nil {
		return fmt.Errorf("the arm's webhook never gated a dry-run pod: %w (last: %s)", err, last)
	}
	return nil
}

func replayClient(t testing.TB, config *rest.Config) kubernetes.Interface {
	t.Helper()
	c := rest.CopyConfig(config)
	c.QPS, c.Burst = replayQPS, replayQPS
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// PodTimes is a PodRecord with times as ms from the round's start (-1:
// never).
type PodTimes struct {
	Name      string  `json:"name"`
	Workload  string  `json:"workload"`
	Member    int     `json:"member"`
	Attempt   int     `json:"attempt"`
	Created   float64 `json:"created"`
	Seen      float64 `json:"seen"`
	Admitted  float64 `json:"admitted"`
	Bound     float64 `json:"bound"`
	Running   float64 `json:"running"`
	Ended     float64 `json:"ended"`
	Succeeded bool    `json:"succeeded"`
	Node      string  `json:"node,omitempty"`
	// Unschedulable: kube-scheduler's first PodScheduled=False
	// Unschedulable (-1: never).
	Unschedulable float64 `json:"unschedulable"`
}

func podTimes(pods []PodRecord, start time.Time) []PodTimes {
	rel := func(t time.Time) float64 {
		if t.IsZero() {
			return -1
		}
		return ms(t.Sub(start))
	}
	out := make([]PodTimes, len(pods))
	for i, p := range pods {
		out[i] = PodTimes{
			Name: p.Namespace + "/" + p.Name, Workload: p.Workload, Member: p.Member, Attempt: p.Attempt,
			Created: rel(p.Created), Seen: rel(p.Seen), Admitted: rel(p.Admitted), Bound: rel(p.Bound),
			Running: rel(p.Running), Ended: rel(p.Ended), Succeeded: p.Succeeded, Node: p.Node,
			Unschedulable: rel(p.Unschedulable),
		}
	}
	return out
}

// WriteJSON writes v indented to path, making its directory.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
