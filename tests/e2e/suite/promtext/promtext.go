// Package promtext reads the Prometheus text format, as much as the suite
// needs: samples with their labels, sums over matching series, and
// histograms with quantiles. It imports nothing of the suite, so that
// cluster and benchkit can both use it.
package promtext

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Sample is one line: `name{label="value",...} number [timestamp]`.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Samples are the samples of one scrape, in the order of the text.
type Samples []Sample

// Parse reads `name{label="value",...} number [timestamp]` lines;
// comments and lines it cannot read are skipped.
func Parse(text string) Samples {
	var out Samples
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		if s, ok := parseLine(line); ok {
			out = append(out, s)
		}
	}
	return out
}

func parseLine(line string) (Sample, bool) {
	s := Sample{Labels: map[string]string{}}
	end := strings.IndexAny(line, "{ ")
	if end <= 0 {
		return s, false
	}
	s.Name, line = line[:end], line[end:]
	if line[0] == '{' {
		rest, ok := parseLabels(line[1:], s.Labels)
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
	s.Value = v
	return s, err == nil
}

// parseLabels reads `a="x",b="y"}` into labels and returns what follows
// the brace. Values are Go-style quoted strings (\" \\ \n).
func parseLabels(text string, labels map[string]string) (string, bool) {
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

// Matches reports whether the sample is of name and its labels include
// match.
func (s Sample) Matches(name string, match map[string]string) bool {
	if s.Name != name {
		return false
	}
	for k, v := range match {
		if s.Labels[k] != v {
			return false
		}
	}
	return true
}

// Sum adds every sample of name whose labels include match (nil: all of
// name's samples).
func (p Samples) Sum(name string, match map[string]string) float64 {
	total := 0.0
	for _, s := range p {
		if s.Matches(name, match) {
			total += s.Value
		}
	}
	return total
}

// LabelValues lists, sorted, the values label takes among name's samples.
func (p Samples) LabelValues(name, label string) []string {
	seen := map[string]bool{}
	for _, s := range p {
		if v, ok := s.Labels[label]; ok && s.Name == name {
			seen[v] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// Histogram is a histogram summed over every series that matches:
// cumulative counts by upper bound (+Inf included), count and sum.
type Histogram struct {
	Buckets    map[float64]float64
	Count, Sum float64
}

// Histogram sums the series of histogram name (its _bucket, _count and
// _sum samples) whose labels include match.
func (p Samples) Histogram(name string, match map[string]string) Histogram {
	h := Histogram{Buckets: map[float64]float64{}}
	for _, s := range p {
		if !s.Matches(name+"_bucket", match) {
			continue
		}
		le, err := strconv.ParseFloat(s.Labels["le"], 64) // "+Inf" parses as +Inf
		if err == nil {
			h.Buckets[le] += s.Value
		}
	}
	h.Count = p.Sum(name+"_count", match)
	h.Sum = p.Sum(name+"_sum", match)
	return h
}

// Minus is what h observed since o (an earlier scrape of the same series).
func (h Histogram) Minus(o Histogram) Histogram {
	d := Histogram{Buckets: map[float64]float64{}, Count: h.Count - o.Count, Sum: h.Sum - o.Sum}
	for le, v := range h.Buckets {
		d.Buckets[le] = v - o.Buckets[le]
	}
	return d
}

// Quantile estimates the q-quantile as Prometheus's histogram_quantile
// does: linear inside the bucket that holds it, the highest finite bound
// if it falls in +Inf.
func (h Histogram) Quantile(q float64) float64 {
	bounds := make([]float64, 0, len(h.Buckets))
	for le := range h.Buckets {
		bounds = append(bounds, le)
	}
	sort.Float64s(bounds)
	if len(bounds) == 0 || h.Count <= 0 {
		return 0
	}
	rank := q * h.Buckets[bounds[len(bounds)-1]]
	lower, below := 0.0, 0.0
	for _, le := range bounds {
		cum := h.Buckets[le]
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
