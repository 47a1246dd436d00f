// Command arena-trace writes the arena's scenario 2 files,
// tests/e2e/arena/scenarios/trace-100.yaml and trace-130.yaml, from the
// Alibaba GPU trace v2023 under <repo>/../shared/data/alibaba-gpu-v2023
// (arena.TraceCuts says how they are cut; the output is deterministic).
//
//	cd tests/e2e/suite && go run ./cmd/arena-trace
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"gpusched.io/e2e/suite/arena"
	"gpusched.io/e2e/suite/controlplane"
)

func main() {
	data := flag.String("data", "", "the trace's directory (default <repo>/"+arena.TraceDataDir+")")
	flag.Parse()
	if err := run(*data); err != nil {
		fmt.Fprintln(os.Stderr, "arena-trace:", err)
		os.Exit(1)
	}
}

func run(data string) error {
	repo, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	if data == "" {
		data = filepath.Join(repo, arena.TraceDataDir)
	}
	for _, cut := range arena.TraceCuts {
		text, err := arena.GenerateTraceScenario(data, cut)
		if err != nil {
			return err
		}
		path := arena.ScenarioPath(repo, cut.Name)
		if err := os.WriteFile(path, text, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %d bytes\n", path, len(text))
	}
	return nil
}
