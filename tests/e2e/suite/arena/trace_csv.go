package arena

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The Alibaba GPU trace v2023 ("openb", alibaba/clusterdata
// cluster-trace-gpu-v2023/csv/), as copied under
// <repo>/../shared/data/alibaba-gpu-v2023 (its README.md says what each
// column means).
const (
	TraceDataDir  = "../shared/data/alibaba-gpu-v2023"
	TraceNodeFile = "openb_node_list_gpu_node.csv"
	TraceTaskFile = "openb_pod_list_default.csv"
)

// TraceNode is a row of the node list: a node with GPUs of one model.
type TraceNode struct {
	Name  string
	GPUs  int
	Model string
}

// TraceTask is a row of the pod list. Times are seconds from the trace's
// start; Scheduled is -1 for a task never scheduled (Pending).
type TraceTask struct {
	Name string
	// GPUs is num_gpu; MilliGPU the share of each (1000: whole GPUs).
	GPUs     int
	MilliGPU int
	// Models are gpu_spec's allowed GPU models (none: any).
	Models    []string
	QoS       string
	Phase     string
	Created   int64
	Deleted   int64
	Scheduled int64
}

// RuntimeSeconds is how long the task held its GPUs in the trace:
// scheduled -> deleted, or created -> deleted for a task never scheduled
// (it held nothing, but it was there that long).
func (t TraceTask) RuntimeSeconds() int64 {
	from := t.Scheduled
	if from < 0 {
		from = t.Created
	}
	return max(0, t.Deleted-from)
}

// ReadTraceNodes reads openb_node_list_gpu_node.csv.
func ReadTraceNodes(r io.Reader) ([]TraceNode, error) {
	rows, err := readTraceCSV(r, "sn", "gpu", "model")
	if err != nil {
		return nil, fmt.Errorf("trace nodes: %w", err)
	}
	var out []TraceNode
	for _, row := range rows {
		gpus, err := strconv.Atoi(row["gpu"])
		if err != nil || gpus < 0 {
			return nil, fmt.Errorf("trace nodes: %s: gpu %q", row["sn"], row["gpu"])
		}
		out = append(out, TraceNode{Name: row["sn"], GPUs: gpus, Model: row["model"]})
	}
	return out, nil
}

// ReadTraceTasks reads openb_pod_list_*.csv, keeping the file's order
// (creation time).
func ReadTraceTasks(r io.Reader) ([]TraceTask, error) {
	rows, err := readTraceCSV(r, "name", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase",
		"creation_time", "deletion_time", "scheduled_time")
	if err != nil {
		return nil, fmt.Errorf("trace tasks: %w", err)
	}
	var out []TraceTask
	for _, row := range rows {
		t, err := traceTask(row)
		if err != nil {
			return nil, fmt.Errorf("trace tasks: %s: %w", row["name"], err)
		}
		out = append(out, t)
	}
	return out, nil
}

func traceTask(row map[string]string) (TraceTask, error) {
	t := TraceTask{Name: row["name"], QoS: row["qos"], Phase: row["pod_phase"], Scheduled: -1}
	ints := []struct {
		column   string
		to       *int64
		optional bool
	}{
		{"creation_time", &t.Created, false},
		{"deletion_time", &t.Deleted, false},
		{"scheduled_time", &t.Scheduled, true},
	}
	for _, f := range ints {
		text := row[f.column]
		if text == "" && f.optional {
			continue
		}
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil || v < 0 {
			return t, fmt.Errorf("%s %q", f.column, text)
		}
		*f.to = v
	}
	var err error
	if t.GPUs, err = strconv.Atoi(row["num_gpu"]); err != nil || t.GPUs < 0 {
		return t, fmt.Errorf("num_gpu %q", row["num_gpu"])
	}
	if t.MilliGPU, err = strconv.Atoi(row["gpu_milli"]); err != nil || t.MilliGPU < 0 || t.MilliGPU > 1000 {
		return t, fmt.Errorf("gpu_milli %q", row["gpu_milli"])
	}
	if spec := strings.TrimSpace(row["gpu_spec"]); spec != "" {
		t.Models = strings.Split(spec, "|")
	}
	return t, nil
}

// readTraceCSV returns the rows as column -> value, after checking the
// header has the wanted columns (so a changed file fails loudly).
func readTraceCSV(r io.Reader, want ...string) ([]map[string]string, error) {
	records, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("empty file")
	}
	header := records[0]
	for _, column := range want {
		if !slices.Contains(header, column) {
			return nil, fmt.Errorf("no column %q in header %v", column, header)
		}
	}
	rows := make([]map[string]string, 0, len(records)-1)
	for _, rec := range records[1:] {
		row := map[string]string{}
		for i, column := range header {
			row[column] = rec[i]
		}
		rows = append(rows, row)
	}
	return rows, nil
}
