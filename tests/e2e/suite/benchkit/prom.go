package benchkit

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"gpusched.io/e2e/suite/cluster"
)

// Prometheus text format, as much as the throughput benchmark reads.

type tpSample struct {
	name   string
	labels map[string]string
	value  float64
}

type tpSamples []tpSample

// tpParseProm reads `name{label="value",...} number [timestamp]` lines;
// comments and lines it cannot read are skipped.
func tpParseProm(text string) tpSamples {
	var out tpSamples
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		if s, ok := tpParsePromLine(line); ok {
			out = append(out, s)
		}
	}
	return out
}

func tpParsePromLine(line string) (tpSample, bool) {
	s := tpSample{labels: map[string]string{}}
	end := strings.IndexAny(line, "{ ")
	if end <= 0 {
		return s, false
	}
	s.name, line = line[:end], line[end:]
	if line[0] == '{' {
		rest, ok := tpParsePromLabels(line[1:], s.labels)
		if !ok {
			return s, false
		}
		line = rest
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, false
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	s.value = v
	return s, err == nil
}

// tpParsePromLabels reads `a="x",b="y"}` into labels and returns what follows
// the brace. Values are Go-style quoted strings (\" \\ \n).
func tpParsePromLabels(text string, labels map[string]string) (string, bool) {
	for {
		text = strings.TrimLeft(text, " ,")
		if strings.HasPrefix(text, "}") {
			return text[1:], true
		}
		eq := strings.IndexByte(text, '=')
		if eq <= 0 || eq+1 >= len(text) || text[eq+1] != '"' {
			return "", false
		}
		key := strings.TrimSpace(text[:eq])
		quoted, err := strconv.QuotedPrefix(text[eq+1:])
		if err != nil {
			return "", false
		}
		value, err := strconv.Unquote(quoted)
		if err != nil {
			return "", false
		}
		labels[key] = value
		text = text[eq+1+len(quoted):]
	}
}

func (s tpSample) matches(name string, match map[string]string) bool {
	if s.name != name {
		return false
	}
	for k, v := range match {
		if s.labels[k] != v {
			return false
		}
	}
	return true
}

// sum adds every sample of name whose labels include match.
func (p tpSamples) sum(name string, match map[string]string) float64 {
	total := 0.0
	for _, s := range p {
		if s.matches(name, match) {
			total += s.value
		}
	}
	return total
}

// labelValues lists the values label takes among name's samples.
func (p tpSamples) labelValues(name, label string) []string {
	seen := map[string]bool{}
	for _, s := range p {
		if v, ok := s.labels[label]; ok && s.name == name {
			seen[v] = true
		}
	}
	return cluster.SortedKeys(seen)
}

// tpHistogram is a histogram summed over every series that matches:
// cumulative counts by upper bound.
type tpHistogram struct {
	buckets    map[float64]float64
	count, sum float64
}

func (p tpSamples) histogram(name string, match map[string]string) tpHistogram {
	h := tpHistogram{buckets: map[float64]float64{}}
	for _, s := range p {
		if !s.matches(name+"_bucket", match) {
			continue
		}
		le, err := strconv.ParseFloat(s.labels["le"], 64) // "+Inf" parses as +Inf
		if err == nil {
			h.buckets[le] += s.value
		}
	}
	h.count = p.sum(name+"_count", match)
	h.sum = p.sum(name+"_sum", match)
	return h
}

func (h tpHistogram) minus(o tpHistogram) tpHistogram {
	d := tpHistogram{buckets: map[float64]float64{}, count: h.count - o.count, sum: h.sum - o.sum}
	for le, v := range h.buckets {
		d.buckets[le] = v - o.buckets[le]
	}
	return d
}

// quantile estimates the q-quantile as Prometheus's histogram_quantile
// does: linear inside the bucket that holds it, the highest finite bound
// if it falls in +Inf.
func (h tpHistogram) quantile(q float64) float64 {
	bounds := make([]float64, 0, len(h.buckets))
	for le := range h.buckets {
		bounds = append(bounds, le)
	}
	sort.Float64s(bounds)
	if len(bounds) == 0 || h.count <= 0 {
		return 0
	}
	rank := q * h.buckets[bounds[len(bounds)-1]]
	lower, below := 0.0, 0.0
	for _, le := range bounds {
		cum := h.buckets[le]
		if cum >= rank {
			if math.IsInf(le, 1) {
				return lower
			}
			if cum == below {
				return le
			}
			return lower + (le-lower)*(rank-below)/(cum-below)
		}
		lower, below = le, cum
	}
	return lower
}

// summary converts seconds to the unit scale gives (1000: ms, 1e6: µs).
func (h tpHistogram) summary(scale float64) tpHistogramSummary {
	if h.count <= 0 {
		return tpHistogramSummary{}
	}
	return tpHistogramSummary{
		Count: h.count,
		Mean:  scale * h.sum / h.count,
		P50:   scale * h.quantile(0.5),
		P99:   scale * h.quantile(0.99),
	}
}
