package arena

import (
	"math"
	"slices"
	"sort"
	"time"
)

// Admission is when a workload was admitted: the first moment every
// member slot's current pod (latest attempt) had its gates lifted (or had
// succeeded), in ms from the round's start.
type Admission struct {
	Workload string  `json:"workload"`
	AtMs     float64 `json:"at_ms"`
}

// admissionOrder lists the workloads admitted, earliest first (ties by
// name, so the order is the same from the same pods).
func admissionOrder(in MeasureInput, ws []*workload) []Admission {
	var out []Admission
	for _, w := range ws {
		if t, ok := w.admittedWhole(); ok {
			out = append(out, Admission{Workload: w.Key(), AtMs: ms(t.Sub(in.Start))})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].AtMs != out[j].AtMs {
			return out[i].AtMs < out[j].AtMs
		}
		return out[i].Workload < out[j].Workload
	})
	return out
}

// admittedWhole is the first admission time of a pod at which every slot
// is admitted (the state can only become true when a gate is lifted).
func (w *workload) admittedWhole() (time.Time, bool) {
	var times []time.Time
	for _, pods := range w.slots {
		for _, p := range pods {
			if !p.Admitted.IsZero() {
				times = append(times, p.Admitted)
			}
		}
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	for _, t := range times {
		if w.allAdmittedAt(t) {
			return t, true
		}
	}
	return time.Time{}, false
}

func (w *workload) allAdmittedAt(t time.Time) bool {
	for _, pods := range w.slots {
		if !slotAdmittedAt(pods, t) {
			return false
		}
	}
	return true
}

// OrderComparison compares the admission order of two arms' rounds of one
// scenario.
type OrderComparison struct {
	Round int       `json:"round"`
	Arms  [2]string `json:"arms"`
	// Workloads is the scenario's; Admitted each arm's count.
	Workloads int            `json:"workloads"`
	Admitted  map[string]int `json:"admitted"`
	// Points: after the first k admissions of each arm, for k a fixed
	// share of the scenario's workloads.
	Points []OrderPoint `json:"points"`
	// Over the workloads both arms admitted: the longest subsequence both
	// orders share, and Kendall's tau of their ranks (1: the same order,
	// -1: reversed; 0 when fewer than two in common).
	Common             int     `json:"common"`
	LongestCommonOrder int     `json:"longest_common_order"`
	KendallTau         float64 `json:"kendall_tau"`
}

// OrderPoint: which workloads each arm had admitted among its first
// Admissions, the time it got there, and which only one arm had.
type OrderPoint struct {
	Share      float64             `json:"share"`
	Admissions int                 `json:"admissions"`
	AtMs       map[string]float64  `json:"at_ms"`
	Both       int                 `json:"both"`
	Only       map[string][]string `json:"only"`
}

// orderShares are the points at which admissions are compared.
var orderShares = []float64{0.25, 0.5, 0.75, 1}

// CompareAdmissionOrder compares a's and b's rounds (the same scenario).
func CompareAdmissionOrder(a, b Round) OrderComparison {
	c := OrderComparison{
		Round: a.Round, Arms: [2]string{a.Arm, b.Arm}, Workloads: a.Measures.Workloads,
		Admitted: map[string]int{a.Arm: len(a.Measures.AdmissionOrder), b.Arm: len(b.Measures.AdmissionOrder)},
	}
	orders := [2][]Admission{a.Measures.AdmissionOrder, b.Measures.AdmissionOrder}
	for _, share := range orderShares {
		c.Points = append(c.Points, orderPoint(c.Arms, orders, share, c.Workloads))
	}
	x, y := commonRanks(orders[0], orders[1])
	c.Common = len(x)
	c.LongestCommonOrder = longestIncreasing(y)
	c.KendallTau = kendallTau(x, y)
	return c
}

func orderPoint(arms [2]string, orders [2][]Admission, share float64, workloads int) OrderPoint {
	k := int(math.Ceil(share * float64(workloads)))
	p := OrderPoint{Share: share, Admissions: k, AtMs: map[string]float64{}, Only: map[string][]string{}}
	var firsts [2]map[string]bool
	for i, order := range orders {
		n := min(k, len(order))
		firsts[i] = map[string]bool{}
		for _, adm := range order[:n] {
			firsts[i][adm.Workload] = true
		}
		if n == k && n > 0 {
			p.AtMs[arms[i]] = order[n-1].AtMs
		}
	}
	for i := range 2 {
		for name := range firsts[i] {
			if firsts[1-i][name] {
				if i == 0 {
					p.Both++
				}
				continue
			}
			p.Only[arms[i]] = append(p.Only[arms[i]], name)
		}
		sort.Strings(p.Only[arms[i]])
	}
	return p
}

// commonRanks: for the workloads both orders hold, listed in a's order,
// their rank in a (x, increasing) and in b (y).
func commonRanks(a, b []Admission) (x, y []int) {
	rankB := map[string]int{}
	for i, adm := range b {
		rankB[adm.Workload] = i
	}
	for i, adm := range a {
		if j, ok := rankB[adm.Workload]; ok {
			x, y = append(x, i), append(y, j)
		}
	}
	return x, y
}

// longestIncreasing is the length of the longest strictly increasing
// subsequence of ys: with x increasing, the longest order both share.
func longestIncreasing(ys []int) int {
	var tails []int
	for _, y := range ys {
		i := sort.SearchInts(tails, y)
		if i == len(tails) {
			tails = append(tails, y)
		} else {
			tails[i] = y
		}
	}
	return len(tails)
}

// kendallTau of paired ranks without ties: (concordant - discordant) /
// pairs.
func kendallTau(x, y []int) float64 {
	n := len(x)
	if n < 2 {
		return 0
	}
	score := 0
	for i := range n {
		for j := i + 1; j < n; j++ {
			if (x[i] < x[j]) == (y[i] < y[j]) {
				score++
			} else {
				score--
			}
		}
	}
	return float64(score) / float64(n*(n-1)/2)
}

// firstRoundOfArms compares the lowest-numbered round in which both arms
// ran and admitted something (nil if none).
func firstRoundOfArms(rounds []Round, first, second string) *OrderComparison {
	return firstComparison(rounds, first, second, func(a, b Round) bool {
		return len(a.Measures.AdmissionOrder)+len(b.Measures.AdmissionOrder) > 0
	}, CompareAdmissionOrder)
}

// firstComparison compares the lowest-numbered round both arms ran for
// which `use` holds; nil when there is none.
func firstComparison[T any](rounds []Round, first, second string, use func(a, b Round) bool,
	compare func(a, b Round) T) *T {
	a, b, ok := firstRoundPair(rounds, first, second, use)
	if !ok {
		return nil
	}
	c := compare(a, b)
	return &c
}

// firstRoundPair is the lowest-numbered round both arms ran for which
// `use` holds.
func firstRoundPair(rounds []Round, first, second string, use func(a, b Round) bool) (Round, Round, bool) {
	byRound := map[int]map[string]Round{}
	for _, r := range rounds {
		if byRound[r.Round] == nil {
			byRound[r.Round] = map[string]Round{}
		}
		byRound[r.Round][r.Arm] = r
	}
	numbers := make([]int, 0, len(byRound))
	for n := range byRound {
		numbers = append(numbers, n)
	}
	sort.Ints(numbers)
	for _, n := range numbers {
		a, okA := byRound[n][first]
		b, okB := byRound[n][second]
		if okA && okB && use(a, b) {
			return a, b, true
		}
	}
	return Round{}, Round{}, false
}
