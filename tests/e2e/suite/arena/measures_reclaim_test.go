package arena

import (
	"math"
	"testing"
	"time"
)

// reclaimFixture: team-b's "b" (2 pods x 8 GPUs) arrives at 0, team-a's
// "a" (1 pod x 8 GPUs) at 5 s.
func reclaimFixture() (MeasureInput, func(ms int) time.Time) {
	in, at := measureFixture()
	qa, qb := QueueRef{Namespace: "team-a", LocalQueue: "team-a"}, QueueRef{Namespace: "team-b", LocalQueue: "team-b"}
	in.Arrivals = []Arrival{
		{At: 0, Queue: qb, Class: "borrower", Name: "b", Pods: 2, PodGPUs: 8},
		{At: 5 * time.Second, Queue: qa, Class: "reclaimer", Name: "a", Pods: 1, PodGPUs: 8},
	}
	in.End = at(20000)
	return in, at
}

func inNamespace(p PodRecord, ns string, gpus int) PodRecord {
	p.Namespace, p.Workload, p.Queue, p.GPUs = ns, ns+"/"+p.Workload[len("ns/"):], ns, gpus
	return p
}

func TestReclaimMeasuresTheVictimsAndTheWorkTheyLose(t *testing.T) {
	in, at := reclaimFixture()
	b1 := member(at, "b", 1, 0, 10, 100, 200, 6000, false)
	b1.Running = at(1200) // ran from 1.2 s, evicted at 6 s: 4.8 s x 8 GPUs lost
	in.Pods = []PodRecord{
		inNamespace(member(at, "b", 0, 0, 10, 100, 200, 15000, true), "team-b", 8),
		inNamespace(b1, "team-b", 8),
		inNamespace(member(at, "b", 1, 1, 6100, 9000, 9100, 19000, true), "team-b", 8),
		// a: arrives at 5 s, Running at 6.5 s.
		inNamespace(member(at, "a", 0, 0, 5010, 6000, 6500, 9000, true), "team-a", 8),
	}
	in.Replacements = 1
	r := Compute(in).Reclaim
	if len(r.Victims) != 1 || r.Victims[0].Workload != "team-b/b" || r.EvictedPods != 1 || r.Victims[0].FirstEvictedMs != 6000 {
		t.Fatalf("victims %+v, evicted pods %d; want team-b/b with one pod evicted at 6000 ms", r.Victims, r.EvictedPods)
	}
	if want := 8 * 4.8 / 3600; math.Abs(r.GPUHoursLost-want) > 1e-12 || math.Abs(r.Victims[0].GPUHoursLost-want) > 1e-12 {
		t.Errorf("GPU-hours lost %v (victim %v), want %v", r.GPUHoursLost, r.Victims[0].GPUHoursLost, want)
	}
	a := r.Queues["team-a"]
	if a.Workloads != 1 || a.ToRunningMs.P50 != 1500 || a.AllRunningMs != 1500 || a.PerWorkloadMs["a"] != 1500 {
		t.Errorf("team-a %+v, want a running 1500 ms after its arrival", a)
	}
	// b: both slots first Running by 200 ms (the first attempt counts).
	if b := r.Queues["team-b"]; b.AllRunningMs != 1200 || b.NeverRunning != 0 {
		t.Errorf("team-b %+v, want all running at 1200 ms", b)
	}
}

func TestReclaimMeasuresAFailedPodNotReplacedIsNoVictimAndANeverRunningQueueSaysSo(t *testing.T) {
	in, at := reclaimFixture()
	in.Pods = []PodRecord{
		// b's member 1 failed at the round's end, never replaced.
		inNamespace(member(at, "b", 0, 0, 10, 100, 200, 15000, true), "team-b", 8),
		inNamespace(member(at, "b", 1, 0, 10, 100, 200, 19000, false), "team-b", 8),
		// a: never bound.
		inNamespace(member(at, "a", 0, 0, 5010, 6000, -1, -1, false), "team-a", 8),
	}
	r := Compute(in).Reclaim
	if len(r.Victims) != 0 || r.GPUHoursLost != 0 {
		t.Errorf("victims %+v, lost %v; want none", r.Victims, r.GPUHoursLost)
	}
	if a := r.Queues["team-a"]; a.NeverRunning != 1 || a.AllRunningMs != -1 || a.PerWorkloadMs["a"] != -1 {
		t.Errorf("team-a %+v, want a never running", a)
	}
}
