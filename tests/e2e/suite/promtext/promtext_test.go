package promtext

import (
	"math"
	"slices"
	"testing"
)

const scrape = `# HELP gpusched_extender_requests_total Requests by verb and code.
# TYPE gpusched_extender_requests_total counter
gpusched_extender_requests_total{verb="filter",code="200"} 7
gpusched_extender_requests_total{verb="preempt",code="200"} 2
gpusched_extender_requests_total{verb="preempt",code="500"} 1
gpusched_nodes 12
d_bucket{verb="bind",le="1"} 3
d_bucket{verb="bind",le="5"} 4
d_bucket{verb="bind",le="+Inf"} 4
d_sum{verb="bind"} 2.5
d_count{verb="bind"} 4
d_bucket{verb="filter",le="1"} 9
d_bucket{verb="filter",le="5"} 9
d_bucket{verb="filter",le="+Inf"} 9
weird{a="x\"y",b="1"} 3 1700000000000
not a sample
`

func TestSumLabelsAndValues(t *testing.T) {
	p := Parse(scrape)
	if got := p.Sum("gpusched_extender_requests_total", map[string]string{"verb": "preempt", "code": "200"}); got != 2 {
		t.Errorf("preempt 200: %v, want 2", got)
	}
	if got := p.Sum("gpusched_extender_requests_total", nil); got != 10 {
		t.Errorf("all requests: %v, want 10", got)
	}
	if got := p.Sum("gpusched_nodes", nil); got != 12 {
		t.Errorf("gpusched_nodes: %v, want 12", got)
	}
	if got := p.Sum("weird", map[string]string{"a": `x"y`}); got != 3 {
		t.Errorf("quoted label: %v, want 3", got)
	}
	if got := p.LabelValues("gpusched_extender_requests_total", "verb"); !slices.Equal(got, []string{"filter", "preempt"}) {
		t.Errorf("verbs: %q", got)
	}
}

func TestHistogram(t *testing.T) {
	p := Parse(scrape)
	h := p.Histogram("d", map[string]string{"verb": "bind"})
	if h.Buckets[1] != 3 || h.Buckets[5] != 4 || h.Buckets[math.Inf(1)] != 4 || h.Count != 4 || h.Sum != 2.5 {
		t.Errorf("bind: %+v", h)
	}
	if all := p.Histogram("d", nil); all.Buckets[1] != 12 {
		t.Errorf("summed over verbs: %+v", all)
	}
	if q := h.Quantile(0.5); q <= 0 || q > 1 {
		t.Errorf("median %v, want within the first bucket", q)
	}
	if d := h.Minus(h); d.Count != 0 || d.Buckets[5] != 0 {
		t.Errorf("h - h: %+v", d)
	}
}
