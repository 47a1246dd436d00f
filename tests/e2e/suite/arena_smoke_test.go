package suite_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"gpusched.io/e2e/suite/arena"
	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// TestArenaSmokeBothArms puts the smoke scenario (tests/e2e/arena/
// scenarios/smoke.yaml: Kueue's performance baseline cut to 78 workloads,
// 309 pods) to both arms, one after the other, each on a fresh control
// plane: Kueue v0.17.0 beside kube-scheduler's default profile, then
// gpusched as deploy/ runs it, with the same policy YAML and the same pods
// at the same times. In both, every workload must finish (a preempted
// member is replaced and runs again) and no pod may be bound while its
// gang is incomplete. Each round's record is kept in
// $E2E_LOG_DIR/artifacts/TestArenaSmokeBothArms/. Kubernetes 1.35 only
// (Kueue v0.17's range); skipped elsewhere before anything starts.
func TestArenaSmokeBothArms(t *testing.T) {
	arena.SkipUnlessKueueRuns(t)
	s := loadArenaScenario(t, "smoke")
	t.Logf("scenario %s", s)
	for _, name := range arena.ArmOrder {
		t.Run(name, func(t *testing.T) {
			round := arena.RunRound(t, arena.Arms[name], s, arena.RoundOptions{
				Round: 1, KeepPods: true,
				Progress: func(complete, workloads int, elapsed time.Duration) {
					t.Logf("%s: %d of %d workloads finished after %v", name, complete, workloads, elapsed.Round(time.Second))
				},
			})
			keepRound(t, round)
			t.Log(describeRound(round))
			checkRoundComplete(t, round)
		})
	}
}

func loadArenaScenario(t *testing.T, name string) *arena.Scenario {
	t.Helper()
	repo, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	s, err := arena.LoadScenario(arena.ScenarioPath(repo, name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keepRound(t *testing.T, round arena.Round) {
	t.Helper()
	repo, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	path := controlplane.ArtifactPath(t, repo, fmt.Sprintf("%s-round-%d.json", round.Arm, round.Round))
	if err := arena.WriteJSON(path, round); err != nil {
		t.Fatal(err)
	}
	t.Logf("round record: %s", path)
}

// checkRoundComplete: every workload finished, every create succeeded,
// and no gang was bound in part.
func checkRoundComplete(t *testing.T, round arena.Round) {
	t.Helper()
	m := round.Measures
	if round.Error != "" {
		t.Errorf("%s: %s", round.Arm, round.Error)
	}
	if m.Complete != m.Workloads {
		t.Errorf("%s: %d of %d workloads finished", round.Arm, m.Complete, m.Workloads)
	}
	if m.Gangs.Violations > 0 {
		t.Errorf("%s: %d pods bound while their gang was incomplete, e.g. %s", round.Arm, m.Gangs.Violations,
			strings.Join(m.Gangs.Examples, "; "))
	}
}

// describeRound is the round's figures on a few lines.
func describeRound(r arena.Round) string {
	m := r.Measures
	var b strings.Builder
	fmt.Fprintf(&b, "%s: wall %.1f s; %d/%d workloads, %d pods (%d replacements, %d failed, %d ungated at creation); setup %.1f s\n",
		r.Arm, m.WallMs/1000, m.Complete, m.Workloads, m.Pods, m.Replacements, m.FailedPods, m.UngatedAtCreation, r.SetupSeconds)
	fmt.Fprintf(&b, "  usage: all queues %.1f %%, least %.1f %% (%s); arrival lag p90 %.0f ms\n",
		m.Usage.AllPct, m.Usage.MinPct, m.Usage.MinQueue, m.ArrivalLagMs.P90)
	for _, class := range cluster.SortedKeys(m.Classes) {
		c := m.Classes[class]
		fmt.Fprintf(&b, "  %s: time to admission avg %.0f ms (p90 %.0f), to running avg %.0f ms; %d evicted\n",
			class, c.TimeToAdmissionMs.Mean, c.TimeToAdmissionMs.P90, c.TimeToRunningMs.Mean, c.Evicted)
	}
	fmt.Fprintf(&b, "  admitted-unbound: max %d, mean %.1f, never bound %d; admit->bind p50 %.0f ms p90 %.0f ms\n",
		m.AdmittedUnbound.Max, m.AdmittedUnbound.Mean, m.AdmittedUnbound.NeverBound,
		m.AdmittedUnbound.AdmitToBindMs.P50, m.AdmittedUnbound.AdmitToBindMs.P90)
	fmt.Fprintf(&b, "  gangs: %d pods bound while their gang was incomplete, %d while another member was still gated %v\n",
		m.Gangs.Violations, m.Gangs.BoundBeforeGangAdmitted, m.Gangs.AdmittedExamples)
	fmt.Fprintf(&b, "  cpu s:")
	for _, name := range cluster.SortedKeys(r.Processes) {
		fmt.Fprintf(&b, " %s %.1f;", name, r.Processes[name].CPUSeconds)
	}
	return b.String()
}
