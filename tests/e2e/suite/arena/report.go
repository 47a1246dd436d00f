package arena

import (
	"maps"
	"sort"
	"time"

	"gpusched.io/e2e/suite/controlplane"
)

// Report is a runner's result file (bench/results/arena_<scenario>.json):
// every round of every arm, the median of each figure per arm over the
// rounds, and gpusched's median divided by Kueue's.
type Report struct {
	Scenario    string    `json:"scenario"`
	File        string    `json:"file"`
	Summary     string    `json:"summary"`
	ScaleFactor float64   `json:"scale_factor"`
	ScaleWhy    string    `json:"scale_why"`
	Generated   time.Time `json:"generated"`
	// Order is the arms' order within each round (interleaved).
	Order       []string          `json:"order"`
	Rounds      int               `json:"rounds"`
	Definitions map[string]string `json:"definitions"`
	// Medians[arm][figure] over the arm's rounds; Ratios[figure] =
	// Medians[gpusched][figure] / Medians[kueue][figure] (absent when
	// Kueue's median is 0).
	Medians map[string]map[string]float64 `json:"medians"`
	Ratios  map[string]float64            `json:"ratios_gpusched_over_kueue"`
	// Targets are the scenario's goals judged on the medians.
	Targets []TargetResult `json:"targets,omitempty"`
	// AdmissionOrder compares the arms' admission order in the first
	// round both ran.
	AdmissionOrder *OrderComparison `json:"admission_order,omitempty"`
	// Flavors and Domains compare the flavors and the topology domains
	// each workload got, same round.
	Flavors *PlacementComparison `json:"flavors,omitempty"`
	Domains *PlacementComparison `json:"domains,omitempty"`
	Runs    []Round              `json:"runs"`
}

// Definitions says what each figure measures, in the result file.
var Definitions = map[string]string{
	"wall_s": "round start (the replay's zero) -> the last workload finished (every member slot Succeeded)",
	"time_to_admission_avg_ms.<class>": "Kueue's 'average time to admission': per workload, scheduled arrival -> " +
		"every member slot has had a pod whose scheduling gates were all lifted (seen by a pod watch)",
	"time_to_running_avg_ms.<class>": "scheduled arrival -> every member slot has had a pod bound (spec.nodeName set)",
	"usage_all_pct": "Kueue's ClusterQueue class usage: sum over ClusterQueues of GPU-time held by admitted pods " +
		"(gate lifted -> Succeeded/Failed/deleted) / (sum of nominal GPUs x wall)",
	"usage_min_pct":        "the least used ClusterQueue's usage, same definition",
	"wait_*_ms":            "over every workload, nearest-rank quantiles of the waits above",
	"admitted_unbound_max": "most pods at once with their gates lifted and not yet bound",
	"admit_to_bind_*_ms":   "per pod, gate lifted -> bound",
	"cpu_s.<process>":      "utime+stime of /proc/<pid>/stat during the replay (from its start to the last finish)",
	"cpu_s.arm":            "the arm's own process: kueue's manager or gpusched",
	"replacements":         "pods the replay created for members that ended without succeeding (preempted)",
	"gang_violations":      "pods bound while a member slot of their workload had no pod (none live, none Succeeded)",
	"provisioning_requests": "ProvisioningRequests the arm created (each attempt of each workload's check), " +
		"answered by the arena's test provisioner",
	"workloads_across_domains": "workloads whose pods ran under more than one value of the scenario's domainLabel " +
		"(a rack, say): what a required topology forbids",
	"bound_before_gang_admitted": "pods bound while another member of their workload was still gated: the gang " +
		"existed whole but was not released whole",
}

// Figures are the round's numbers the report takes medians of.
func (r Round) Figures() map[string]float64 {
	m := r.Measures
	f := map[string]float64{
		"wall_s":                     m.WallMs / 1000,
		"complete":                   float64(m.Complete),
		"usage_all_pct":              m.Usage.AllPct,
		"usage_min_pct":              m.Usage.MinPct,
		"wait_to_admission_p50_ms":   m.WaitToAdmissionMs.P50,
		"wait_to_admission_p90_ms":   m.WaitToAdmissionMs.P90,
		"wait_to_running_p50_ms":     m.WaitToRunningMs.P50,
		"wait_to_running_p90_ms":     m.WaitToRunningMs.P90,
		"admitted_unbound_max":       float64(m.AdmittedUnbound.Max),
		"admitted_unbound_mean":      m.AdmittedUnbound.Mean,
		"admitted_unbound_never":     float64(m.AdmittedUnbound.NeverBound),
		"admit_to_bind_p50_ms":       m.AdmittedUnbound.AdmitToBindMs.P50,
		"admit_to_bind_p90_ms":       m.AdmittedUnbound.AdmitToBindMs.P90,
		"arrival_lag_p90_ms":         m.ArrivalLagMs.P90,
		"replacements":               float64(m.Replacements),
		"gang_violations":            float64(m.Gangs.Violations),
		"bound_before_gang_admitted": float64(m.Gangs.BoundBeforeGangAdmitted),
		"ungated_at_creation":        float64(m.UngatedAtCreation),
		"pods":                       float64(m.Pods),
		"setup_s":                    r.SetupSeconds,
	}
	if r.Provisioning != nil {
		f["provisioning_requests"] = float64(len(r.Provisioning))
	}
	if m.Domains != nil {
		f["workloads_across_domains"] = float64(acrossDomains(m.Domains))
	}
	maps.Copy(f, m.Trace.Figures())
	for class, c := range m.Classes {
		f["time_to_admission_avg_ms."+class] = c.TimeToAdmissionMs.Mean
		f["time_to_running_avg_ms."+class] = c.TimeToRunningMs.Mean
	}
	all := 0.0
	for name, p := range r.Processes {
		key := name
		switch name {
		case "kueue", controlplane.Gpusched:
			key = "arm"
		case SelfProcess:
			key = "arena"
		}
		f["cpu_s."+key] = p.CPUSeconds
		all += p.CPUSeconds
	}
	f["cpu_s.all"] = all
	addGangAndReclaimFigures(f, m)
	return f
}

// NewReport gathers the rounds (their Pods dropped) with medians and
// ratios.
func NewReport(s *Scenario, file string, rounds []Round) Report {
	r := Report{
		Scenario: s.Name, File: file, Summary: s.String(), ScaleFactor: s.Scale.Factor, ScaleWhy: s.Scale.Why,
		Generated: time.Now().UTC(), Order: ArmOrder, Definitions: Definitions,
		Medians: map[string]map[string]float64{}, Ratios: map[string]float64{},
	}
	values := map[string]map[string][]float64{}
	for _, round := range rounds {
		round.Pods = nil
		round.FigureValues = round.Figures()
		r.Runs = append(r.Runs, round)
		r.Rounds = max(r.Rounds, round.Round)
		if values[round.Arm] == nil {
			values[round.Arm] = map[string][]float64{}
		}
		for k, v := range round.Figures() {
			values[round.Arm][k] = append(values[round.Arm][k], v)
		}
	}
	for arm, figures := range values {
		r.Medians[arm] = map[string]float64{}
		for k, vs := range figures {
			r.Medians[arm][k] = median(vs)
		}
	}
	for k, g := range r.Medians["gpusched"] {
		if q, ok := r.Medians["kueue"][k]; ok && q != 0 {
			r.Ratios[k] = g / q
		}
	}
	for _, t := range s.Targets {
		r.Targets = append(r.Targets, t.Judge(r.Medians))
	}
	r.AdmissionOrder = firstRoundOfArms(rounds, "kueue", "gpusched")
	r.Flavors = firstPlacementComparison(rounds, "kueue", "gpusched", flavorsOf)
	r.Domains = firstPlacementComparison(rounds, "kueue", "gpusched", domainsOf)
	return r
}

// median of values (the mean of the middle two for an even count).
func median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
