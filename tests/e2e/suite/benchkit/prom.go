package benchkit

import "gpusched.io/e2e/suite/promtext"

// tpSummary summarizes a histogram of seconds in the unit scale gives
// (1000: ms, 1e6: µs).
func tpSummary(h promtext.Histogram, scale float64) tpHistogramSummary {
	if h.Count <= 0 {
		return tpHistogramSummary{}
	}
	return tpHistogramSummary{
		Count: h.Count,
		Mean:  scale * h.Sum / h.Count,
		P50:   scale * h.Quantile(0.5),
		P99:   scale * h.Quantile(0.99),
	}
}
