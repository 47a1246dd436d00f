package suite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"

	"gpusched.io/e2e/suite/browser"
	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
	"gpusched.io/e2e/suite/promtext"
)

// H's surfaces on a DRA node (issue I §2): one DRA-only DGX H100 whose
// gpu-3 a DeviceTaintRule taints NoSchedule, and a pod whose claim
// template asks all 8 GPUs. explain names the claim's request (class,
// count, checked by gpusched) and says the node has 7 free, 1 tainted;
// gpunodes and the dashboard's tooltip name each GPU's DRA device and
// gpu-3's taint; /metrics counts the devices by state.
func TestDraDevicesOnExplainTheGpuMapAndMetrics(t *testing.T) {
	chromium := browser.Chromium(t)
	policy := queuePolicy(t, map[string]int{"team-a": 8}, nil)
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Visibility: true, Policy: policy})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	node := draNodes[0]
	cluster.SetUpDraCluster(ctx, t, cp, node)
	createClaimTemplates(ctx, t, cp, cluster.GpuClaimTemplate("eight-gpus", 8))
	createDeviceTaintRule(ctx, t, cp, node, "gpu-3", resourcev1.DeviceTaintEffectNoSchedule)
	waitGpuschedOffers(ctx, t, cp, map[string]int{node: 8}, 7)
	createPending(ctx, t, cp, cluster.NewPod(cluster.Namespace, "eight").SchedulerName(cluster.SchedulerName).
		Label(cluster.QueueLabel, "team-a").ClaimFromTemplate(draPodClaim, "eight-gpus"))

	checkDraExplain(ctx, t, cp)
	checkDraGpuNodes(ctx, t, cp, node)
	checkDraMetrics(t, cp)
	checkDraTooltip(t, cp, chromium)
}

const draTaint = "gpusched.io/e2e-maintenance=true:NoSchedule"

type draExplanation struct {
	Placement []struct {
		Verdict string `json:"verdict"`
		Dra     string `json:"dra"`
	} `json:"placement"`
	Dra *struct {
		Requests []struct {
			Claim       string `json:"claim"`
			DeviceClass string `json:"deviceClass"`
			Count       int    `json:"count"`
			CheckedBy   string `json:"checkedBy"`
		} `json:"requests"`
		Charged []struct {
			Resource string `json:"resource"`
			Amount   int    `json:"amount"`
		} `json:"charged"`
	} `json:"dra"`
}

// checkDraExplain: the request as the template asks it, charged as 8
// GPUs, and the node's devices against it.
func checkDraExplain(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	var e draExplanation
	var last string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		out, err := cp.Kubectl(ctx, "get", "--raw", explainPath(cluster.Namespace, "eight"))
		e = draExplanation{}
		last = fmt.Sprintf("%s %v", out, err)
		if err == nil && json.Unmarshal(out, &e) == nil && len(e.Placement) > 0 && e.Placement[0].Dra != "" {
			t.Logf("explain eight:\n%s", out)
			break
		}
	}
	if e.Dra == nil || len(e.Dra.Requests) != 1 || len(e.Placement) == 0 {
		t.Fatalf("explain eight has no DRA requests or placement; last: %s", last)
	}
	r := e.Dra.Requests[0]
	if r.Claim != "template "+cluster.Namespace+"/eight-gpus" || r.DeviceClass != cluster.NvidiaGpuClass ||
		r.Count != 8 || r.CheckedBy != "gpusched" {
		t.Errorf("explain's request %+v, want template eight-gpus: 8 of %s checked by gpusched", r, cluster.NvidiaGpuClass)
	}
	if len(e.Dra.Charged) != 1 || e.Dra.Charged[0].Amount != 8 {
		t.Errorf("explain's charge %+v, want 8 %s", e.Dra.Charged, cluster.GpuResource)
	}
	want := "7 free, 1 tainted (gpu-3 " + draTaint + ") of 8 matching"
	if !strings.Contains(e.Placement[0].Dra, want) {
		t.Errorf("explain's DRA devices %q, want %q", e.Placement[0].Dra, want)
	}
}

// checkDraGpuNodes: the node's GPUs come from DRA, each named, gpu-3
// with its taint.
func checkDraGpuNodes(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, node string) {
	t.Helper()
	var list struct {
		Items []struct {
			Metadata struct{ Name string } `json:"metadata"`
			Status   struct {
				GpuSource string `json:"gpuSource"`
				Gpus      []struct {
					Healthy   bool     `json:"healthy"`
					DraDevice string   `json:"draDevice"`
					Taints    []string `json:"taints"`
				} `json:"gpus"`
			} `json:"status"`
		} `json:"items"`
	}
	// The map is published once a second (serve's ticker).
	var out []byte
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, err = cp.Kubectl(ctx, "get", "--raw", visibilityPrefix+"/gpunodes")
		if err == nil && json.Unmarshal(out, &list) == nil && len(list.Items) == 1 {
			break
		}
	}
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("gpunodes after 5 s: %v: %s", err, out)
	}
	s := list.Items[0].Status
	if list.Items[0].Metadata.Name != node || s.GpuSource != "DRA" || len(s.Gpus) != 8 {
		t.Fatalf("gpunodes %s: source %q, %d GPUs; want %s, DRA, 8", list.Items[0].Metadata.Name, s.GpuSource,
			len(s.Gpus), node)
	}
	for i, g := range s.Gpus {
		tainted := i == 3
		if g.DraDevice != fmt.Sprintf("gpu-%d", i) || g.Healthy == tainted ||
			(tainted && (len(g.Taints) != 1 || g.Taints[0] != draTaint)) {
			t.Errorf("gpunodes GPU %d: %+v, want gpu-%d, tainted %v", i, g, i, tainted)
		}
	}
}

// checkDraMetrics: 8 devices of NVIDIA's driver, 7 free and 1 tainted
// (the pending pod holds none), on one node served by DRA.
func checkDraMetrics(t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	text, err := cp.GpuschedMetrics()
	if err != nil {
		t.Fatal(err)
	}
	samples := promtext.Parse(text)
	for state, want := range map[string]float64{"free": 7, "tainted": 1, "allocated": 0} {
		got := samples.Sum("gpusched_dra_devices", map[string]string{"driver": cluster.NvidiaDraDriver, "state": state})
		if got != want {
			t.Errorf("gpusched_dra_devices{state=%q} = %v, want %v", state, got, want)
		}
	}
	if got := samples.Sum("gpusched_nodes_by_gpu_source", map[string]string{"source": "dra"}); got != 1 {
		t.Errorf("gpusched_nodes_by_gpu_source{source=\"dra\"} = %v, want 1", got)
	}
}

// checkDraTooltip: hovering the map's gpu-3 names its DRA device and
// taint, and says where the node's GPUs come from. One node: 22 px cells,
// 3 px apart, 5 px padding and a 15 px name (map.js sizing).
func checkDraTooltip(t *testing.T, cp *controlplane.ControlPlane, chromium string) {
	t.Helper()
	chrome := browser.Start(t, chromium)
	page := browser.Open(t, chrome, cp.KubectlProxy()+dashPage)
	browser.Until[string](t, page, 30*time.Second, "the GPU map", `document.getElementById('map-summary').textContent`)
	at := browser.Eval[[]float64](t, page,
		`(() => { const r = document.getElementById('map').getBoundingClientRect(); return [r.left + 5 + 3 * 25 + 11, r.top + 31]; })()`)
	browser.Hover(t, page, at[0], at[1])
	tip := browser.Until[string](t, page, 5*time.Second, "the map's tooltip",
		`!document.getElementById('map-tip').hidden && document.getElementById('map-tip').textContent`)
	for _, want := range []string{"GPUs published by a DRA driver", "GPU 3 (DRA device gpu-3) (unhealthy)",
		"tainted: " + draTaint} {
		if !strings.Contains(tip, want) {
			t.Errorf("the tooltip over gpu-3 is %q, want %q in it", tip, want)
		}
	}
	t.Logf("tooltip over gpu-3:\n%s", tip)
	if errors := page.Errors(); len(errors) > 0 {
		t.Errorf("the page wrote to its console:\n%s", strings.Join(errors, "\n"))
	}
}
