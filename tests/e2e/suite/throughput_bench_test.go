package suite_test

import (
	"testing"

	"gpusched.io/e2e/suite/benchkit"
)

// The throughput benchmarks live in package benchkit (their arms, the
// /metrics parser, the result files); these entries make them part of the
// e2e.test binary, where bench/suites and ctest's bench_smoke run them.

// BenchmarkKubeSchedulerThroughput: pods bound per second through the real
// kube-scheduler, alone and with gpusched as its extender
// (benchkit.KubeSchedulerThroughput says how). Run it once:
//
//	e2e.test -test.run '^$' -test.bench '^BenchmarkKubeSchedulerThroughput$' -test.benchtime 1x
func BenchmarkKubeSchedulerThroughput(b *testing.B) {
	benchkit.KubeSchedulerThroughput(b)
}

// BenchmarkQueuedThroughput: created -> bound pods/s of pods in a queue
// against the same pods in none, and of gangs against as many single pods,
// webhook registered in every arm (benchkit.QueuedThroughput says how).
func BenchmarkQueuedThroughput(b *testing.B) {
	benchkit.QueuedThroughput(b)
}
