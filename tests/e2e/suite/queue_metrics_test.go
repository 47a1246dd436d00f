package suite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// The queue metrics as an operator sees them: a real Prometheus scrapes
// gpusched every second while two queues run gangs and a third gang waits,
// and every query of deploy/'s Grafana dashboard must return data. The
// GPUs Prometheus says each queue uses must be the GPUs of that queue's
// bound pods in the API server, and each admission counted once.

// queueMetricsQueues: the cohort's 24 GPUs all in use once the scenario's
// three gangs are bound (team-a 2 x (2 x 4), team-b 2 x 4).
var queueMetricsQueues = map[string]int{"team-a": 16, "team-b": 8}

// The dashboard's variables as the test fills them in.
var dashboardVariables = strings.NewReplacer(
	"${cluster_queue}", "team-a|team-b",
	"$cluster_queue", "team-a|team-b",
	"$__rate_interval", "1m",
)

func TestQueueMetricsFeedTheGrafanaDashboard(t *testing.T) {
	binary := prometheusBinary(t)
	policy := queuePolicy(t, queueMetricsQueues, nil)
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy})
	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()
	cluster.SetUpDemoCluster(ctx, t, cp)
	for _, gang := range []struct{ queue, name string }{{"team-a", "a1"}, {"team-b", "b1"}, {"team-a", "a2"}} {
		queuedGang(ctx, t, cp, gang.queue, gang.name, 2, 4, nil)
		waitGangBound(ctx, t, cp, gang.name, 2, 30*time.Second)
	}
	// The cohort has no GPU left to lend: this gang waits, inadmissible.
	queuedGang(ctx, t, cp, "team-b", "waiting", 2, 8, nil)
	prom := startPrometheus(ctx, t, binary, cp.GpuschedURL)
	prom.waitFor(ctx, t, `gpusched_pending_workloads{cluster_queue="team-b",status="inadmissible"} == 1`)
	holdNoneBound(ctx, t, cp, "waiting", time.Second)

	for _, expr := range dashboardQueries(t) {
		prom.waitFor(ctx, t, dashboardVariables.Replace(expr))
	}
	checkClusterQueueVariable(ctx, t, prom)
	checkUsedGpusAreBoundPods(ctx, t, cp, prom)
	checkAdmissionsCountedOnce(ctx, t, prom, map[string]float64{"team-a": 2, "team-b": 1})
}

// prometheusBinary is Debian's prometheus (make deps installs it); a
// machine without it skips the test, CI fails it.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("prometheus")
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no prometheus binary on the PATH (CI installs it: make deps)")
	}
	t.Skip("no prometheus binary on the PATH: install it (apt-get install prometheus, or make deps) to run this test")
	return ""
}

// dashboardQueries are the expressions of every panel's targets.
func dashboardQueries(t *testing.T) []string {
	t.Helper()
	repo := os.Getenv("GPUSCHED_REPO")
	if repo == "" {
		repo = filepath.Join("..", "..", "..")
	}
	text, err := os.ReadFile(filepath.Join(repo, "deploy", "grafana", "gpusched-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dashboard struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(text, &dashboard); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	var exprs []string
	for _, panel := range dashboard.Panels {
		for _, target := range panel.Targets {
			exprs = append(exprs, target.Expr)
		}
	}
	if len(exprs) < 10 {
		t.Fatalf("dashboard: %d panel queries, want the queue, GPU, wait and eviction panels", len(exprs))
	}
	return exprs
}

// prometheus is a Prometheus server the test runs.
type prometheus struct {
	url string
	log string
}

// startPrometheus runs prometheus scraping gpusched's /metrics every
// second, its configuration and data in the test's temporary directory.
func startPrometheus(ctx context.Context, t *testing.T, binary, target string) *prometheus {
	t.Helper()
	dir := t.TempDir()
	host := strings.TrimPrefix(target, "http://")
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gpusched
    scrape_interval: 1s
    scrape_timeout: 1s
    static_configs:
      - targets: ["%s"]
`, host)
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &prometheus{url: "http://" + freeLoopbackAddress(t), log: filepath.Join(dir, "prometheus.log")}
	logFile, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--config.file="+configPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+strings.TrimPrefix(p.url, "http://"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logFile.Close()
		if t.Failed() {
			p.logTail(t)
		}
	})
	p.waitReady(ctx, t)
	return p
}

func freeLoopbackAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func (p *prometheus) logTail(t *testing.T) {
	text, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimSpace(string(text)), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	t.Logf("prometheus log (last %d lines):\n%s", len(lines), strings.Join(lines, "\n"))
}

func (p *prometheus) waitReady(ctx context.Context, t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.url + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("prometheus not ready at %s after 30 s (last error %v)", p.url, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// series is one element of an instant query's vector.
type series struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s series) number(t *testing.T) float64 {
	t.Helper()
	text, _ := s.Value[1].(string)
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		t.Fatalf("sample %v: %v", s.Value, err)
	}
	return v
}

// get calls Prometheus's HTTP API and decodes its data.
func (p *prometheus) get(ctx context.Context, path string, params url.Values, data any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+path+"?"+params.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var answer struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return fmt.Errorf("%s: HTTP %d: %s", path, resp.StatusCode, body)
	}
	if answer.Status != "success" {
		return fmt.Errorf("%s: %s", path, answer.Error)
	}
	return json.Unmarshal(answer.Data, data)
}

// query runs an instant query; a bad expression fails the test at once.
func (p *prometheus) query(ctx context.Context, t *testing.T, expr string) []series {
	t.Helper()
	var data struct {
		ResultType string   `json:"resultType"`
		Result     []series `json:"result"`
	}
	if err := p.get(ctx, "/api/v1/query", url.Values{"query": {expr}}, &data); err != nil {
		t.Fatalf("query %q: %v", expr, err)
	}
	if data.ResultType != "vector" {
		t.Fatalf("query %q: result type %s, want vector", expr, data.ResultType)
	}
	return data.Result
}

// waitFor waits up to 30 s (a few scrapes, and two samples for rate())
// until the expression returns at least one series.
func (p *prometheus) waitFor(ctx context.Context, t *testing.T, expr string) []series {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if result := p.query(ctx, t, expr); len(result) > 0 {
			return result
		}
		if time.Now().After(deadline) {
			t.Fatalf("query %q returned no series after 30 s of 1 s scrapes", expr)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// checkClusterQueueVariable: the dashboard's variable, label_values of
// gpusched_pending_workloads, lists both queues.
func checkClusterQueueVariable(ctx context.Context, t *testing.T, prom *prometheus) {
	t.Helper()
	var values []string
	params := url.Values{"match[]": {"gpusched_pending_workloads"}}
	if err := prom.get(ctx, "/api/v1/label/cluster_queue/values", params, &values); err != nil {
		t.Fatal(err)
	}
	sort.Strings(values)
	if strings.Join(values, ",") != "team-a,team-b" {
		t.Errorf("label_values(gpusched_pending_workloads, cluster_queue) = %v, want [team-a team-b]", values)
	}
}

// boundGpusByQueue sums the nvidia.com/gpu requests of bound pods by
// their LocalQueue, which names its ClusterQueue here (ResearchQueues).
func boundGpusByQueue(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) map[string]float64 {
	t.Helper()
	list, err := cp.Client.CoreV1().Pods(cluster.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]float64{}
	for i := range list.Items {
		pod := &list.Items[i]
		if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded {
			continue
		}
		for _, c := range pod.Spec.Containers {
			gpus := c.Resources.Requests[corev1.ResourceName(cluster.GpuResource)]
			used[pod.Labels["kueue.x-k8s.io/queue-name"]] += float64(gpus.Value())
		}
	}
	return used
}

var usedGpusQuery = regexp.MustCompile(`^sum by \(cluster_queue\) \(gpusched_cluster_queue_resource_usage\{`)

// checkUsedGpusAreBoundPods: the dashboard's "used" query per queue
// equals the GPUs of the queue's bound pods, once a scrape after the binds
// is in (polled: the last scrape may be up to a second old).
func checkUsedGpusAreBoundPods(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, prom *prometheus) {
	t.Helper()
	var expr string
	for _, e := range dashboardQueries(t) {
		if usedGpusQuery.MatchString(e) {
			expr = dashboardVariables.Replace(e)
		}
	}
	if expr == "" {
		t.Fatal("dashboard: no panel query sums gpusched_cluster_queue_resource_usage by cluster_queue")
	}
	var got, want map[string]float64
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		want = boundGpusByQueue(ctx, t, cp)
		got = map[string]float64{}
		for _, s := range prom.query(ctx, t, expr) {
			got[s.Metric["cluster_queue"]] = s.number(t)
		}
		if fmt.Sprint(got) == fmt.Sprint(want) || time.Now().After(deadline) {
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("GPUs used by queue: Prometheus says %v, the API server's bound pods %v", got, want)
	}
	if want["team-a"] != 16 || want["team-b"] != 8 {
		t.Errorf("bound GPUs by queue %v, want team-a 16 and team-b 8 (the scenario's gangs)", want)
	}
}

// checkAdmissionsCountedOnce: after many passes (one a second at least),
// each gang's admission is counted once.
func checkAdmissionsCountedOnce(ctx context.Context, t *testing.T, prom *prometheus, want map[string]float64) {
	t.Helper()
	got := map[string]float64{}
	for _, s := range prom.query(ctx, t, `gpusched_admitted_workloads_total`) {
		got[s.Metric["cluster_queue"]] += s.number(t)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("gpusched_admitted_workloads_total by queue = %v, want %v", got, want)
	}
}
