// Command arena runs a scenario (tests/e2e/arena/scenarios/) through both
// arms for N rounds, interleaved (kueue, gpusched, kueue, ...), each round
// one run of the e2e test binary's TestArenaRound on a fresh control plane
// of the release's binaries, and writes every round with the medians and
// the gpusched / kueue ratios to bench/results/arena_<scenario>.json.
//
//	make e2e-prepare
//	cd tests/e2e/suite && go run ./cmd/arena -build ../../../build -scenario smoke -rounds 3
//
// Each round's full record (every pod's times) and log stay in the work
// directory (default BUILD/arena/<scenario>-<time>/).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gpusched.io/e2e/suite/arena"
	"gpusched.io/e2e/suite/controlplane"
)

type options struct {
	build, scenario, release, out, work string
	rounds, kueueQPS                    int
}

func main() {
	var o options
	flag.StringVar(&o.build, "build", "", "the build directory tests/e2e/prepare.sh prepared (required)")
	flag.StringVar(&o.scenario, "scenario", "smoke", "a scenario name under "+arena.ScenarioDir+", or a file")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds; each runs every arm once")
	flag.IntVar(&o.kueueQPS, "kueue-qps", 0, "raise Kueue's client limit to this qps (burst twice); 0 keeps the release's")
	flag.StringVar(&o.release, "release", "release-1.35", "the Kubernetes release whose binaries run (a tests/e2e/release-* prepared)")
	flag.StringVar(&o.out, "out", "", "result file (default <repo>/bench/results/arena_<scenario>.json)")
	flag.StringVar(&o.work, "work", "", "directory for each round's record and log (default BUILD/arena/<scenario>-<time>)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "arena:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.build == "" || o.rounds < 1 {
		return fmt.Errorf("-build is required and -rounds must be at least 1")
	}
	repo, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	// The rounds run in tests/e2e/suite: every path they get is absolute.
	path := o.scenario
	if !strings.ContainsAny(path, "/.") {
		path = arena.ScenarioPath(repo, path)
	}
	for _, p := range []*string{&path, &o.build, &o.work, &o.out} {
		if *p != "" {
			if *p, err = filepath.Abs(*p); err != nil {
				return err
			}
		}
	}
	s, err := arena.LoadScenario(path)
	if err != nil {
		return err
	}
	env, err := testEnv(o.build, o.release)
	if err != nil {
		return err
	}
	if o.work == "" {
		o.work = filepath.Join(o.build, "arena", s.Name+"-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	if o.out == "" {
		o.out = filepath.Join(repo, "bench", "results", "arena_"+s.Name+".json")
	}
	fmt.Printf("arena: %s\n  %d rounds of %v on %s; work dir %s\n", s, o.rounds, arena.ArmOrder, o.release, o.work)
	var rounds []arena.Round
	for r := 1; r <= o.rounds; r++ {
		for _, arm := range arena.ArmOrder {
			rounds = append(rounds, runRound(o, repo, path, env, s, arm, r))
		}
	}
	rel, _ := filepath.Rel(repo, path)
	report := arena.NewReport(s, rel, rounds)
	if err := arena.WriteJSON(o.out, report); err != nil {
		return err
	}
	printReport(report)
	printAdmissionOrder(report)
	fmt.Printf("arena: wrote %s\n", o.out)
	return nil
}

// testEnv is what run-test.sh sources: BUILD/e2e/env, then the release's.
func testEnv(build, release string) ([]string, error) {
	if skip, err := os.ReadFile(filepath.Join(build, "e2e", "skip")); err == nil {
		return nil, fmt.Errorf("e2e skipped in %s: %s", build, strings.TrimSpace(string(skip)))
	}
	var env []string
	for _, name := range []string{"env", release + ".env"} {
		vars, err := readEnvFile(filepath.Join(build, "e2e", name))
		if err != nil {
			return nil, fmt.Errorf("%w (run make e2e-prepare)", err)
		}
		env = append(env, vars...)
	}
	return env, nil
}

func readEnvFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var vars []string
	scan := bufio.NewScanner(f)
	for scan.Scan() {
		if line := strings.TrimSpace(scan.Text()); strings.Contains(line, "=") && !strings.HasPrefix(line, "#") {
			vars = append(vars, line)
		}
	}
	return vars, scan.Err()
}

// runRound runs one arm's round in the test binary and reads its record;
// a round that left none is a Round with only its Error.
func runRound(o options, repo, scenario string, env []string, s *arena.Scenario, arm string, r int) arena.Round {
	name := fmt.Sprintf("round-%d-%s", r, arm)
	out := filepath.Join(o.work, name+".json")
	logPath := filepath.Join(o.work, name+".log")
	timeout, _ := s.TimeoutDuration()
	began := time.Now()
	err := runTestBinary(o.build, repo, logPath, timeout+10*time.Minute, append(env,
		"ARENA_SCENARIO="+scenario, "ARENA_ARM="+arm, fmt.Sprintf("ARENA_ROUND=%d", r), "ARENA_OUT="+out,
		fmt.Sprintf("%s=%d", arena.KueueClientQPSEnv, o.kueueQPS)))
	var round arena.Round
	if readErr := readJSON(out, &round); readErr != nil {
		round = arena.Round{Scenario: s.Name, Arm: arm, Round: r, Error: fmt.Sprintf("no record (%v; test: %v); log %s", readErr, err, logPath)}
	} else if err != nil {
		round.Error = strings.TrimPrefix(round.Error+fmt.Sprintf("; test failed: %v (log %s)", err, logPath), "; ")
	}
	status := "ok"
	if round.Error != "" {
		status = round.Error
	}
	fmt.Printf("  round %d %-8s wall %6.1f s  %d/%d workloads  (%v in all) %s\n", r, arm,
		round.Measures.WallMs/1000, round.Measures.Complete, round.Measures.Workloads, time.Since(began).Round(time.Second), status)
	return round
}

func runTestBinary(build, repo, logPath string, timeout time.Duration, env []string) error {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return err
	}
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(filepath.Join(build, "e2e", "e2e.test"), "-test.run", "^TestArenaRound$",
		"-test.v", "-test.count=1", "-test.timeout", timeout.String())
	cmd.Dir = filepath.Join(repo, "tests", "e2e", "suite")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	return cmd.Run()
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// printReport prints the medians side by side with their ratio.
func printReport(r arena.Report) {
	var keys []string
	for k := range r.Medians["kueue"] {
		keys = append(keys, k)
	}
	for k := range r.Medians["gpusched"] {
		if _, ok := r.Medians["kueue"][k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	fmt.Printf("%-40s %12s %12s %8s\n", "median over rounds", "kueue", "gpusched", "ratio")
	for _, k := range keys {
		ratio := "-"
		if v, ok := r.Ratios[k]; ok {
			ratio = fmt.Sprintf("%.2f", v)
		}
		fmt.Printf("%-40s %12.1f %12.1f %8s\n", k, r.Medians["kueue"][k], r.Medians["gpusched"][k], ratio)
	}
	for _, t := range r.Targets {
		verdict := "met"
		switch {
		case t.Missing:
			verdict = "not measured"
		case !t.Met:
			verdict = "NOT met"
		}
		fmt.Printf("target %-40s %-22s kueue %10.1f gpusched %10.1f  %s\n", t.Figure, t.Rule, t.Kueue, t.Gpusched, verdict)
	}
}
