package suite_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"gpusched.io/e2e/suite/celdiff"
	"gpusched.io/e2e/suite/controlplane"
)

// minDecidedShare is the share of the corpus' valid selectors gpusched must
// decide itself (the rest it leaves to kube-scheduler): a parser that
// gives up on everything agrees with upstream too, and must fail here.
const minDecidedShare = 0.85

// TestCelSelectorsAgreeWithUpstream evaluates every (selector, device)
// pair of tests/testdata/cel/corpus.json with upstream's
// k8s.io/dynamic-resource-allocation/cel, as kube-scheduler v1.37.2 does,
// and with gpusched (gpusched_cel_verdicts). Each pair must get the same
// verdict (match, no match, runtime error), or "outside the subset" from
// gpusched; an expression CEL's checker rejects must be outside. No
// control plane: upstream's evaluator is a library.
func TestCelSelectorsAgreeWithUpstream(t *testing.T) {
	repo, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(repo, celdiff.CorpusPath)
	corpus, data, err := celdiff.ReadCorpus(path)
	if err != nil {
		t.Fatal(err)
	}
	checkCorpusIsGenerated(t, corpus, data)

	upstream := celdiff.Upstream(corpus)
	gpusched, err := celdiff.Gpusched(celVerdictsBinary(repo), path, len(corpus.Pairs))
	if err != nil {
		t.Fatal(err)
	}
	upstreamTally, gpuschedTally := celdiff.Tally{}, celdiff.Tally{}
	disagreements := 0
	for i, pair := range corpus.Pairs {
		up, ours := upstream[i], gpusched[i]
		upstreamTally[up.Verdict]++
		gpuschedTally[ours.Verdict]++
		if celdiff.Agree(up.Verdict, ours.Verdict) {
			continue
		}
		disagreements++
		t.Errorf("pair %d, device %s:\n  selector: %s\n  upstream: %s %s\n  gpusched: %s %s",
			i, pair.Device, pair.Selector, up.Verdict, up.Detail, ours.Verdict, ours.Detail)
	}
	valid := len(corpus.Pairs) - upstreamTally[celdiff.Invalid]
	decided := len(corpus.Pairs) - gpuschedTally[celdiff.Outside]
	t.Logf("%d pairs (%d selectors, %d devices), %d disagreements", len(corpus.Pairs),
		distinctSelectors(corpus), len(corpus.Devices), disagreements)
	t.Logf("upstream: %v", upstreamTally)
	t.Logf("gpusched: %v; decides %d of the %d pairs CEL accepts (%.0f%%)",
		gpuschedTally, decided, valid, 100*float64(decided)/float64(valid))
	if float64(decided) < minDecidedShare*float64(valid) {
		t.Errorf("gpusched decides %d of %d valid pairs, fewer than %.0f%%",
			decided, valid, 100*minDecidedShare)
	}
}

// checkCorpusIsGenerated fails unless the committed file is what the
// generator writes for its seed, with at least 500 pairs.
func checkCorpusIsGenerated(t *testing.T, corpus *celdiff.Corpus, data []byte) {
	t.Helper()
	want, err := celdiff.Generate(corpus.Seed).Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		t.Fatalf("%s is not what the generator writes for seed %d: regenerate it with "+
			"(cd tests/e2e/suite && go run ./cmd/celcorpus)",
			celdiff.CorpusPath, corpus.Seed)
	}
	if len(corpus.Pairs) < 500 {
		t.Fatalf("corpus has %d pairs, want at least 500", len(corpus.Pairs))
	}
}

// celVerdictsBinary is $GPUSCHED_CEL_VERDICTS (prepare.sh sets it), else
// the one in the repository's build/.
func celVerdictsBinary(repo string) string {
	if path := os.Getenv("GPUSCHED_CEL_VERDICTS"); path != "" {
		return path
	}
	return filepath.Join(repo, "build", "tests", "gpusched_cel_verdicts")
}

func distinctSelectors(corpus *celdiff.Corpus) int {
	seen := map[string]bool{}
	for _, pair := range corpus.Pairs {
		seen[pair.Selector] = true
	}
	return len(seen)
}
