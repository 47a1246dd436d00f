package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// ModelPod is a pod as gpusched's model holds it (GET /v1/nodes).
type ModelPod struct {
	Node, Key, UID string
	GpuIDs         []int
}

// GpuschedModel reads gpusched's /v1/nodes: the pods its model holds, by
// UID. Only a check: the tests never decide anything from it.
func GpuschedModel(ctx context.Context, gpuschedURL string) (map[string]ModelPod, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, gpuschedURL+"/v1/nodes", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("gpusched /v1/nodes: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("gpusched /v1/nodes: status %d, %v: %.200s", resp.StatusCode, err, body)
	}
	var doc struct {
		Nodes []struct {
			Name string
			Pods []struct {
				Name, UID string
				GpuIDs    []int `json:"gpuIds"`
			}
		}
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("gpusched /v1/nodes: %w", err)
	}
	pods := map[string]ModelPod{}
	for _, n := range doc.Nodes {
		for _, p := range n.Pods {
			ids := slices.Clone(p.GpuIDs)
			sort.Ints(ids)
			pods[p.UID] = ModelPod{Node: n.Name, Key: p.Name, UID: p.UID, GpuIDs: ids}
		}
	}
	return pods, nil
}

// ModelDiff compares gpusched's model with the API server's pods: every
// pod holding a node (bound, not finished; being deleted counts) must be
// in the model on that node with the devices of its gpu-ids, and the model
// must hold nothing else. One sentence per difference; none when they
// agree.
func ModelDiff(model map[string]ModelPod, pods []corev1.Pod) []string {
	var diffs []string
	inAPI := map[string]bool{}
	for i := range pods {
		p := &pods[i]
		if !Bound(p) || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		key := p.Namespace + "/" + p.Name
		inAPI[string(p.UID)] = true
		got, ok := model[string(p.UID)]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("pod %s (uid %s) is bound to %s but missing from gpusched's model", key, p.UID, p.Spec.NodeName))
			continue
		}
		want, _ := GpuIDs(p)
		sort.Ints(want)
		if got.Node != p.Spec.NodeName || !slices.Equal(got.GpuIDs, want) {
			diffs = append(diffs, fmt.Sprintf("pod %s: API has node %s GPUs %v, gpusched's model node %s GPUs %v",
				key, p.Spec.NodeName, want, got.Node, got.GpuIDs))
		}
	}
	for uid, m := range model {
		if !inAPI[uid] {
			diffs = append(diffs, fmt.Sprintf("gpusched's model holds GPUs %v on %s for pod %s (uid %s), which holds no node in the API",
				m.GpuIDs, m.Node, m.Key, uid))
		}
	}
	sort.Strings(diffs)
	return diffs
}

// HistogramBuckets returns the cumulative bucket counts (by their le
// label, "+Inf" included) of the series of histogram `name` whose labels
// contain `label` (e.g. `verb="bind"`), from Prometheus text.
func HistogramBuckets(metrics, name, label string) map[string]float64 {
	buckets := map[string]float64{}
	prefix := name + "_bucket{"
	for _, line := range strings.Split(metrics, "\n") {
		if !strings.HasPrefix(line, prefix) || !strings.Contains(line, label) {
			continue
		}
		le, value, ok := faultBucketOf(line)
		if ok {
			buckets[le] = value
		}
	}
	return buckets
}

// faultBucketOf reads `..._bucket{...,le="5"} 12`.
func faultBucketOf(line string) (le string, value float64, ok bool) {
	_, rest, found := strings.Cut(line, `le="`)
	if !found {
		return "", 0, false
	}
	le, rest, found = strings.Cut(rest, `"`)
	if !found {
		return "", 0, false
	}
	fields := strings.Fields(rest[strings.Index(rest, "}")+1:])
	if len(fields) == 0 {
		return "", 0, false
	}
	value, err := strconv.ParseFloat(fields[0], 64)
	return le, value, err == nil
}

// MetricSum adds the values of every sample of `name` whose labels contain
// all of `labels` (Prometheus text; counters and gauges).
func MetricSum(metrics, name string, labels ...string) float64 {
	var sum float64
	for _, line := range strings.Split(metrics, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		matched := true
		for _, l := range labels {
			matched = matched && strings.Contains(line, l)
		}
		fields := strings.Fields(line)
		if !matched || len(fields) < 2 {
			continue
		}
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// GrepLog returns the lines of a component log that contain every one of
// `all`.
func GrepLog(path string, all ...string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 0, 64<<10), 4<<20) // klog lines carry whole pods
	for scanner.Scan() {
		line := scanner.Text()
		matched := true
		for _, s := range all {
			matched = matched && strings.Contains(line, s)
		}
		if matched {
			out = append(out, line)
		}
	}
	return out, scanner.Err()
}

// GpuschedReady reads gpusched's /readyz: true on 200, false on 503 (the
// model has not loaded yet), an error otherwise.
func GpuschedReady(ctx context.Context, gpuschedURL string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, gpuschedURL+"/readyz", nil)
	if err != nil {
		return false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, fmt.Errorf("gpusched /readyz: %w", err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return true, nil
	case http.StatusServiceUnavailable:
		return false, nil
	}
	return false, fmt.Errorf("gpusched /readyz: status %d", resp.StatusCode)
}
