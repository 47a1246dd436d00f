package suite_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"gpusched.io/e2e/suite/arena"
)

// The variables through which cmd/arena asks TestArenaRound for a round.
const (
	arenaScenarioEnv = "ARENA_SCENARIO" // scenario file
	arenaArmEnv      = "ARENA_ARM"      // kueue or gpusched
	arenaRoundEnv    = "ARENA_ROUND"    // round number
	arenaOutEnv      = "ARENA_OUT"      // where the Round goes (JSON)
)

// TestArenaRound is cmd/arena's entry point, one arm's round of a
// scenario per run of the test binary (so each round is a fresh process
// as well as a fresh control plane). Without ARENA_SCENARIO it is
// skipped: the runner, not ctest, runs it.
func TestArenaRound(t *testing.T) {
	path := os.Getenv(arenaScenarioEnv)
	if path == "" {
		t.Skipf("%s is unset: cmd/arena runs this test, one round at a time", arenaScenarioEnv)
	}
	out := os.Getenv(arenaOutEnv)
	if out == "" {
		t.Fatalf("%s is unset: where should the round go?", arenaOutEnv)
	}
	arm, ok := arena.Arms[os.Getenv(arenaArmEnv)]
	if !ok {
		t.Fatalf("%s=%q: want one of %v", arenaArmEnv, os.Getenv(arenaArmEnv), arena.ArmOrder)
	}
	round, err := strconv.Atoi(os.Getenv(arenaRoundEnv))
	if err != nil {
		t.Fatalf("%s: %v", arenaRoundEnv, err)
	}
	s, err := arena.LoadScenario(path)
	if err != nil {
		t.Fatal(err)
	}
	arena.SkipUnlessKueueRuns(t)
	t.Logf("scenario %s; arm %s, round %d", s, arm.Name(), round)
	r := arena.RunRound(t, arm, s, arena.RoundOptions{
		Round: round, KeepPods: true,
		Progress: func(complete, workloads int, elapsed time.Duration) {
			t.Logf("%d of %d workloads finished after %v", complete, workloads, elapsed.Round(time.Second))
		},
	})
	t.Log(describeRound(r))
	if err := arena.WriteJSON(out, r); err != nil {
		t.Fatal(err)
	}
	// Written first, so the runner reads it; failing keeps the round's
	// logs (gpusched.log, the control plane's) for whoever asks why.
	if r.Error != "" {
		t.Errorf("round incomplete: %s", r.Error)
	}
}
