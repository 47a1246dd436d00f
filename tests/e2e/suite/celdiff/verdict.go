package celdiff

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"

	"k8s.io/dynamic-resource-allocation/cel"
)

// Verdict is what an evaluator made of one pair.
type Verdict string

const (
	Matches Verdict = "true"
	NoMatch Verdict = "false"
	// RuntimeError: CEL's runtime error, which kube-scheduler reports as a
	// failed allocation.
	RuntimeError Verdict = "error"
	// Invalid: CEL's checker rejects the expression (the API server would
	// not store it). Upstream only.
	Invalid Verdict = "invalid"
	// Outside: gpusched leaves the expression to kube-scheduler. gpusched
	// only.
	Outside Verdict = "outside"
)

// Result is a verdict and what the evaluator said with it.
type Result struct {
	Verdict Verdict
	Detail  string
}

// KubeSchedulerFeatures are the cel.Features kube-scheduler v1.37.2 builds
// its cache with by default (pkg/scheduler/framework/plugins/
// dynamicresources: DRAConsumableCapacity is beta and on,
// DRAListTypeAttributes alpha and off in pkg/features/kube_features.go).
var KubeSchedulerFeatures = cel.Features{
	EnableConsumableCapacity: true,
	EnableListTypeAttributes: false,
}

// Upstream evaluates every pair as kube-scheduler's allocator does
// (structured/internal/stable selectorsMatch): the cache's compilation,
// then DeviceMatches on the device's driver, attributes and capacity.
func Upstream(corpus *Corpus) []Result {
	cache := cel.NewCache(len(corpus.Pairs), KubeSchedulerFeatures)
	devices := corpus.DeviceByName()
	out := make([]Result, len(corpus.Pairs))
	for i, pair := range corpus.Pairs {
		compiled := cache.GetOrCompile(pair.Selector)
		if compiled.Error != nil {
			out[i] = Result{Invalid, compiled.Error.Error()}
			continue
		}
		d := devices[pair.Device]
		matches, _, err := compiled.DeviceMatches(context.Background(), cel.Device{
			Driver: d.Driver, Attributes: d.Attributes, Capacity: d.Capacity,
		})
		switch {
		case err != nil:
			out[i] = Result{RuntimeError, err.Error()}
		case matches:
			out[i] = Result{Verdict: Matches}
		default:
			out[i] = Result{Verdict: NoMatch}
		}
	}
	return out
}

// Gpusched runs gpusched's side (tests/cel/cel_verdicts_main.cc) on the
// corpus file; it prints one "<verdict>\t<detail>" line per pair.
func Gpusched(binary, corpusPath string, pairs int) ([]Result, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(binary, corpusPath)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s", binary, corpusPath, err, stderr.String())
	}
	var out []Result
	scanner := bufio.NewScanner(&stdout)
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	for scanner.Scan() {
		verdict, detail, _ := strings.Cut(scanner.Text(), "\t")
		switch v := Verdict(verdict); v {
		case Matches, NoMatch, RuntimeError, Outside:
			out = append(out, Result{v, detail})
		default:
			return nil, fmt.Errorf("%s: line %d: unknown verdict %q", binary, len(out)+1, verdict)
		}
	}
	if len(out) != pairs {
		return nil, fmt.Errorf("%s: %d verdicts for %d pairs", binary, len(out), pairs)
	}
	return out, nil
}

// Agree says whether gpusched's verdict is upstream's: the same, or
// gpusched leaving the selector to kube-scheduler. An expression CEL's
// checker rejects must be left.
func Agree(upstream, gpusched Verdict) bool {
	if gpusched == Outside {
		return true
	}
	return upstream != Invalid && upstream == gpusched
}

// Tally counts verdicts.
type Tally map[Verdict]int

func (t Tally) String() string {
	var parts []string
	for _, v := range []Verdict{Matches, NoMatch, RuntimeError, Invalid, Outside} {
		if t[v] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", v, t[v]))
		}
	}
	return strings.Join(parts, ", ")
}
