package suite_test

import (
	"strings"
	"testing"
	"time"
)

// TestAdmissionMonitorCatchesBrokenPromises: the monitor's checks, without
// a cluster, on workloads that break each promise, so that the tests using
// it can fail: a queue over its quota, a member bound before its gang is
// admitted, a gang partly bound too long, a later workload admitted well
// before an earlier one of the same queue.
func TestAdmissionMonitorCatchesBrokenPromises(t *testing.T) {
	m := &admissionMonitor{quotas: map[string]int64{"q": 4}, partlyLimit: time.Second, orderSlack: time.Second,
		earlySlack: time.Second,
		seen:       map[string]bool{}, admittedAt: map[string]time.Time{}, partlySince: map[string]time.Time{}}
	t0 := time.Unix(1000, 0)
	early := &monitorWorkload{key: "group:a", queue: "q", created: t0, size: 4, admitted: 2, bound: 1, gpus: 2}
	first := &monitorWorkload{key: "single-1", queue: "q", created: t0, size: 1}
	later := &monitorWorkload{key: "single-2", queue: "q", created: t0.Add(time.Second), size: 1, admitted: 1, gpus: 3}
	workloads := []*monitorWorkload{early, first, later}

	m.checkQuotas(workloads)
	m.checkGang(early, t0)
	m.checkGang(early, t0.Add(2*time.Second))
	m.admittedAt["single-2"] = t0
	m.checkOrder(workloads, t0.Add(3*time.Second))

	want := []string{"over its quota of 4", "1 members bound while 2 of 4 are admitted", "partly bound (1 of 4)",
		"single-1 (created", "group:a (created"}
	all := strings.Join(m.problems, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("no problem containing %q in:\n%s", w, all)
		}
	}

	// Within the slack, and in order, nothing is reported.
	m = &admissionMonitor{orderSlack: time.Second, seen: map[string]bool{}, admittedAt: map[string]time.Time{
		"single-1": t0.Add(500 * time.Millisecond), "single-2": t0}}
	first.admitted = 1
	m.checkOrder([]*monitorWorkload{first, later}, t0.Add(time.Minute))
	if len(m.problems) != 0 {
		t.Errorf("admissions within the slack reported: %q", m.problems)
	}
}
