package arena

// The report's figures of gang placement (scenario 3) and reclaim
// (scenario 4), and their definitions in the result file.

func init() {
	for k, v := range gangAndReclaimDefinitions {
		Definitions[k] = v
	}
}

var gangAndReclaimDefinitions = map[string]string{
	"bound_after_created_p50_ms.<class>": "per workload, its last member's first pod created -> the first moment every " +
		"member's current pod (latest attempt) is bound at once; nearest-rank p50 (p90 likewise) over the class",
	"partly_bound_gang_s": "summed over gangs (workloads of 2+ pods), the time during which at least one member's " +
		"current pod (latest attempt) is bound (running or succeeded) while another's is not (not created, gated, " +
		"pending, failed and not replaced), up to the round's end",
	"partly_bound_holding_gang_s": "the part of partly_bound_gang_s during which a bound member still holds its GPUs " +
		"(not ended): the fake kubelet runs each pod alone, so members may finish before the last is bound",
	"gangs_never_complete":              "gangs without a Succeeded pod in every member slot at the round's end",
	"running_after_arrival_p50_ms.<ns>": "per workload of the namespace's queue, scheduled arrival -> every member slot has had a Running pod (p90 likewise)",
	"all_running_after_arrival_ms.<ns>": "the queue's first arrival -> its last workload all Running (-1 if one never was)",
	"victims":                           "workloads with an evicted pod: one that ended without succeeding and was replaced",
	"evicted_pods":                      "pods that ended without succeeding and were replaced",
	"gpu_hours_lost":                    "over evicted pods, GPUs x (ended - Running): work lost, nothing checkpoints",
}

// addGangAndReclaimFigures adds m's gang and reclaim figures to f.
func addGangAndReclaimFigures(f map[string]float64, m Measures) {
	g := m.GangPlacement
	for class, q := range g.BoundAfterCreatedMs {
		f["bound_after_created_p50_ms."+class] = q.P50
		f["bound_after_created_p90_ms."+class] = q.P90
	}
	f["partly_bound_gang_s"] = g.PartlyBoundS
	f["partly_bound_holding_gang_s"] = g.PartlyBoundHoldingS
	f["gangs_never_complete"] = float64(g.NeverCompleted)
	r := m.Reclaim
	for ns, q := range r.Queues {
		f["running_after_arrival_p50_ms."+ns] = q.ToRunningMs.P50
		f["running_after_arrival_p90_ms."+ns] = q.ToRunningMs.P90
		f["all_running_after_arrival_ms."+ns] = q.AllRunningMs
	}
	f["victims"] = float64(len(r.Victims))
	f["evicted_pods"] = float64(r.EvictedPods)
	f["gpu_hours_lost"] = r.GPUHoursLost
}
