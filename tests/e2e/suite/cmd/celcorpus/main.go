// Command celcorpus writes the differential CEL test's corpus
// (tests/testdata/cel/corpus.json in the repository): run it after
// changing the generator (package celdiff), and commit the file.
//
//	(cd tests/e2e/suite && go run ./cmd/celcorpus)
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"gpusched.io/e2e/suite/celdiff"
	"gpusched.io/e2e/suite/controlplane"
)

func main() {
	out := flag.String("out", "", "file to write (default: the repository's "+celdiff.CorpusPath+")")
	seed := flag.Uint64("seed", celdiff.DefaultSeed, "generator seed")
	flag.Parse()
	if err := write(*out, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "celcorpus:", err)
		os.Exit(1)
	}
}

func write(out string, seed uint64) error {
	if out == "" {
		repo, err := controlplane.RepoRoot()
		if err != nil {
			return err
		}
		out = filepath.Join(repo, celdiff.CorpusPath)
	}
	data, err := celdiff.Generate(seed).Encode()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, data, 0o644)
}
