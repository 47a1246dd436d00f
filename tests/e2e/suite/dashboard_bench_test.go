package suite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"gpusched.io/e2e/suite/benchkit"
	"gpusched.io/e2e/suite/browser"
	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// The render benchmark's cluster: four ClusterQueues in cohort research,
// each full with 8-GPU pods on whole nodes, and dashQueuedPerQueue 8-GPU
// workloads more waiting in each; the rest of the nodes free.
const (
	dashBenchNamespace = "bench"
	dashQueuedPerQueue = 25
	dashTargetMs       = 2000
)

var dashBenchQueues = []string{"team-a", "team-b", "team-c", "team-d"}

// BenchmarkDashboardRender measures, in headless Chromium, the time from
// navigating to the dashboard to its first full render (every panel's data
// fetched and the GPU map drawn: document.body.dataset.firstRenderMs) on a
// generated cluster of E2E_DASH_NODES (default 5,000) DGX H100 nodes, 8
// GPUs each, 60 % of them held by queued pods coloured by their four
// ClusterQueues and 100 workloads waiting. `gpusched serve --cluster
// --policy --dashboard-listen` serves it (no control plane: the page and
// its data are the same through the aggregated API). E2E_DASH_RUNS
// (default 5) fresh tabs; p50 and p90 are reported, with the last poll's
// data fetch and drawing times. E2E_DASH_OUT names a JSON result file.
// Target: 2 s on CI's machine.
func BenchmarkDashboardRender(b *testing.B) {
	chromium := browser.Chromium(b)
	nodes := benchkit.EnvInts(b, "E2E_DASH_NODES", []int{5000})[0]
	runs := benchkit.EnvInts(b, "E2E_DASH_RUNS", []int{5})[0]
	repo, err := controlplane.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	clusterFile := writeDashBenchCluster(b, repo, dir, nodes)
	quotas := map[string]int{}
	for _, q := range dashBenchQueues {
		quotas[q] = dashBusyNodes(nodes) / len(dashBenchQueues) * 8
	}
	policy := writePolicy(b, cluster.KueuePolicy{Queues: cluster.ResearchQueues(dashBenchNamespace, quotas)})
	url := startDashServe(b, repo, dir, clusterFile, policy, nodes)
	chrome := browser.Start(b, chromium)
	var samples []dashSample
	for i := 0; i < runs; i++ {
		samples = append(samples, dashRenderOnce(b, chrome, url, i == runs-1,
			controlplane.ArtifactPath(b, repo, "dashboard-render.png")))
		b.Logf("run %d: first render %.0f ms (fetch %.0f ms, render %.0f ms)",
			i+1, samples[i].FirstRenderMs, samples[i].FetchMs, samples[i].RenderMs)
	}
	reportDashRender(b, nodes, samples)
}

// dashBusyNodes: the nodes the running pods fill, a multiple of the queues.
func dashBusyNodes(nodes int) int {
	busy := nodes * 6 / 10
	return busy - busy%len(dashBenchQueues)
}

type dashSample struct {
	FirstRenderMs float64 `json:"first_render_ms"`
	FetchMs       float64 `json:"fetch_ms"`
	RenderMs      float64 `json:"render_ms"`
}

// dashRenderOnce opens the page in a new tab and waits for its first
// render; the last run keeps a screenshot. The tab is closed after, so
// that no earlier page polls while the next one loads.
func dashRenderOnce(b *testing.B, chrome context.Context, url string, shoot bool, shot string) dashSample {
	page := browser.Open(b, chrome, url)
	defer page.Close()
	first := browser.Until[string](b, page, 60*time.Second, "the first render", `document.body.dataset.firstRenderMs`)
	var s dashSample
	s.FirstRenderMs, _ = strconv.ParseFloat(first, 64)
	s.FetchMs, _ = strconv.ParseFloat(browser.Eval[string](b, page, `document.body.dataset.fetchMs`), 64)
	s.RenderMs, _ = strconv.ParseFloat(browser.Eval[string](b, page, `document.body.dataset.renderMs`), 64)
	if shoot {
		browser.Screenshot(b, page, shot, true)
		b.Logf("screenshot: %s", shot)
	}
	if errors := page.Errors(); len(errors) > 0 {
		b.Errorf("the page wrote to its console:\n%s", strings.Join(errors, "\n"))
	}
	return s
}

func reportDashRender(b *testing.B, nodes int, samples []dashSample) {
	first := make([]float64, len(samples))
	for i, s := range samples {
		first[i] = s.FirstRenderMs
	}
	slices.Sort(first)
	quantile := func(q float64) float64 { return first[int(q*float64(len(first)-1)+0.5)] }
	p50, p90 := quantile(0.5), quantile(0.9)
	b.ReportMetric(p50, "ms-p50")
	b.ReportMetric(p90, "ms-p90")
	b.Logf("%d nodes x 8 GPUs: first render p50 %.0f ms, p90 %.0f ms over %d runs (target %d ms)",
		nodes, p50, p90, len(samples), dashTargetMs)
	if out := os.Getenv("E2E_DASH_OUT"); out != "" {
		benchkit.WriteJSONReport(b, out, map[string]any{
			"benchmark": "dashboard_render", "nodes": nodes, "gpus": nodes * 8,
			"target_ms": dashTargetMs, "p50_ms": p50, "p90_ms": p90, "runs": samples,
			"conditions": map[string]any{"machine": benchkit.Machine(),
				"browser":   "Debian chromium, headless, --no-sandbox, 1400x1000 window",
				"measure":   "navigation start -> first full render (performance.now() when every panel is drawn)",
				"served_by": "gpusched serve --cluster (generated) --policy --dashboard-listen (loopback)"}})
	}
}

// ---- the cluster file and the server ----

// writeDashBenchCluster writes `nodes` copies of the demo cluster's DGX
// H100 and the pods: the busy nodes each run one queued 8-GPU pod, and
// each queue has dashQueuedPerQueue more waiting. JSON: read fastest.
func writeDashBenchCluster(b *testing.B, repo, dir string, nodes int) string {
	template := benchkit.NodeTemplate(b, repo)
	var items []any
	for i := range nodes {
		node := benchkit.NodeCopy(template, i)
		node.TypeMeta = metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}
		items = append(items, node)
	}
	busy := dashBusyNodes(nodes)
	for i := range busy {
		queue := dashBenchQueues[i%len(dashBenchQueues)]
		items = append(items, dashBenchPod(fmt.Sprintf("run-%05d", i), queue, benchkit.NodeCopy(template, i).Name))
	}
	for i := range dashQueuedPerQueue * len(dashBenchQueues) {
		queue := dashBenchQueues[i%len(dashBenchQueues)]
		items = append(items, dashBenchPod(fmt.Sprintf("wait-%05d", i), queue, ""))
	}
	data, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "cluster.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// dashBenchPod: an 8-GPU pod of the queue, running on node, or waiting.
func dashBenchPod(name, queue, node string) corev1.Pod {
	gpus := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}
	pod := corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: dashBenchNamespace,
			UID:               types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
			Labels:            map[string]string{cluster.QueueLabel: queue}},
		Spec: corev1.PodSpec{SchedulerName: cluster.SchedulerName, NodeName: node,
			Containers: []corev1.Container{{Name: "main", Image: "pause",
				Resources: corev1.ResourceRequirements{Requests: gpus, Limits: gpus}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	if node != "" {
		pod.Annotations = map[string]string{cluster.GpuIDsAnnotation: "0,1,2,3,4,5,6,7"}
		pod.Status.Phase = corev1.PodRunning
	}
	return pod
}

// startDashServe runs gpusched serve on the file with the dashboard on a
// free loopback port, and waits until its map holds every node and its
// queues the waiting workloads. Returns the page's URL.
func startDashServe(b *testing.B, repo, dir, clusterFile, policy string, nodes int) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	bin := os.Getenv("GPUSCHED_BIN")
	if bin == "" {
		bin = filepath.Join(repo, "build", "gpusched")
	}
	log, err := os.Create(filepath.Join(dir, "gpusched.log"))
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--listen=127.0.0.1:0", "--cluster="+clusterFile, "--policy="+policy,
		fmt.Sprintf("--dashboard-listen=127.0.0.1:%d", port))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		log.Close()
	})
	root := fmt.Sprintf("http://127.0.0.1:%d/apis/visibility.gpusched.io/v1alpha1", port)
	waitDashServed(b, root, nodes, log.Name())
	b.Logf("gpusched serve: %d nodes listed and %d workloads waiting after %v",
		nodes, dashQueuedPerQueue*len(dashBenchQueues), time.Since(began).Round(time.Millisecond))
	return root + "/dashboard/"
}

func waitDashServed(b *testing.B, root string, nodes int, log string) {
	want := dashQueuedPerQueue * len(dashBenchQueues)
	var last string
	for deadline := time.Now().Add(120 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		var list struct {
			Items []struct {
				Status struct {
					PendingWorkloads int `json:"pendingWorkloads"`
				} `json:"status"`
			} `json:"items"`
		}
		mapped, err1 := dashCount(root+"/gpunodes", nil)
		_, err2 := dashCount(root+"/clusterqueues", &list)
		pending := 0
		for _, q := range list.Items {
			pending += q.Status.PendingWorkloads
		}
		if err1 == nil && err2 == nil && mapped == nodes && pending == want {
			return
		}
		last = fmt.Sprintf("%d of %d nodes mapped, %d of %d waiting (%v %v)", mapped, nodes, pending, want, err1, err2)
	}
	b.Fatalf("gpusched serve never served the cluster: %s; log %s", last, log)
}

// dashCount GETs a list and returns its item count, decoding it into out
// as well when given.
func dashCount(url string, out any) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return 0, fmt.Errorf("%s: %d %w", url, resp.StatusCode, err)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return 0, err
		}
	}
	return len(list.Items), nil
}
