package arena

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The forms beyond Kueue's generator: GPUs per pod, a set's start and
// queues, node selectors, workloads listed one by one, node groups.
const formsScenario = `
name: forms
description: every form
scale: {factor: 1, queues: {kept: 2, of: 2}, counts: 1}
timeScale: 1
timeout: 1m
nodes:
  groups:
  - {count: 2, gpus: 8, labels: {nvidia.com/gpu.product: A100}}
  - {count: 1, gpus: 2}
policy: |
  apiVersion: kueue.x-k8s.io/v1beta2
  kind: ClusterQueue
  metadata: {name: cq}
  spec:
    namespaceSelector: {}
    resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors:
      - name: rf
        resources:
        - {name: nvidia.com/gpu, nominalQuota: 18}
  ---
  apiVersion: kueue.x-k8s.io/v1beta2
  kind: LocalQueue
  metadata: {namespace: a, name: lq}
  spec: {clusterQueue: cq}
  ---
  apiVersion: kueue.x-k8s.io/v1beta2
  kind: LocalQueue
  metadata: {namespace: b, name: lq}
  spec: {clusterQueue: cq}
queues:
- {namespace: a, localQueue: lq}
- {namespace: b, localQueue: lq}
workloadSets:
- {class: gang, count: 2, startMs: 1000, intervalMs: 500, runtimeMs: 100, request: 4, podGPUs: 8, queues: [b], nodeSelector: {nvidia.com/gpu.product: A100}}
workloads:
- {name: first, class: solo, queue: a, atMs: 200, runtimeMs: 300, pods: 1}
`

func writeScenario(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestScenarioFormsBeyondTheGenerator(t *testing.T) {
	s, err := LoadScenario(writeScenario(t, formsScenario))
	if err != nil {
		t.Fatal(err)
	}
	if nodes, gpus := s.Nodes.Total(); nodes != 3 || gpus != 18 {
		t.Errorf("nodes %d, GPUs %d; want 3, 18", nodes, gpus)
	}
	arrivals := s.Arrivals()
	if len(arrivals) != 3 {
		t.Fatalf("%d arrivals, want 3 (2 gangs in b only, 1 listed)", len(arrivals))
	}
	first, gang := arrivals[0], arrivals[1]
	if first.Name != "first" || first.At != 200*time.Millisecond || first.Queue.Namespace != "a" || first.GPUs() != 1 {
		t.Errorf("first arrival %+v", first)
	}
	if gang.At != 1500*time.Millisecond || gang.Queue.Namespace != "b" || gang.Pods != 4 || gang.GPUs() != 8 {
		t.Errorf("gang arrival %+v", gang)
	}
	pod := gang.Pod(0, 0, "default-scheduler")
	if q := pod.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"]; q.Value() != 8 {
		t.Errorf("gang pod requests %v GPUs", q.String())
	}
	if pod.Spec.NodeSelector["nvidia.com/gpu.product"] != "A100" {
		t.Errorf("gang pod node selector %v", pod.Spec.NodeSelector)
	}
	if w, p := s.Totals(); w != 3 || p != 9 {
		t.Errorf("totals %d workloads, %d pods; want 3, 9", w, p)
	}
	if !strings.Contains(s.String(), "3 nodes, 18 GPUs") {
		t.Errorf("summary %q", s.String())
	}
}

func TestScenarioFormsThatAreRefused(t *testing.T) {
	cases := map[string][2]string{
		"groups and count":    {"nodes:\n  groups:", "nodes:\n  count: 1\n  gpus: 8\n  groups:"},
		"unknown set queue":   {"queues: [b]", "queues: [c]"},
		"unknown workload ns": {"queue: a, atMs", "queue: z, atMs"},
		"listed twice":        {"pods: 1}\n", "pods: 1}\n- {name: first, class: solo, queue: a, atMs: 1, runtimeMs: 1, pods: 1}\n"},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			text := strings.Replace(formsScenario, edit[0], edit[1], 1)
			if text == formsScenario {
				t.Fatalf("edit %q found nothing to change", edit[0])
			}
			if _, err := LoadScenario(writeScenario(t, text)); err == nil {
				t.Errorf("loaded; want an error")
			}
		})
	}
}
