package arena

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"gpusched.io/e2e/suite/controlplane"
	"gpusched.io/e2e/suite/kubelet"
)

// Every scenario file under ScenarioDir loads and passes Check, its Kueue
// Configuration (if any) included.
func TestEveryScenarioFileLoads(t *testing.T) {
	repo, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(repo, ScenarioDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files (%v)", err)
	}
	for _, file := range files {
		s, err := LoadScenario(file)
		if err != nil {
			t.Error(err)
			continue
		}
		if _, err := KueueConfigurationOverlay(s.Policy); err != nil {
			t.Errorf("%s: %v", file, err)
		}
	}
}

// The block-admission scenario's Configuration reaches the Kueue arm's
// manager config as its waitForPodsReady, replacing the arm's default,
// while the listeners stay the arena's.
func TestScenarioConfigurationReplacesTheArmsWaitForPodsReady(t *testing.T) {
	s := loadFixed(t, "block-admission")
	c, err := KueueArmConfig(s)
	if err != nil {
		t.Fatal(err)
	}
	var base map[string]any
	if err := yaml.Unmarshal([]byte(shipped), &base); err != nil {
		t.Fatal(err)
	}
	out, err := managerConfig(base, c, ports{Health: 1, Metrics: 2, Webhook: 3, Visibility: 4}, "kueue-system", "/certs")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"timeout": "5m", "blockAdmission": true}
	if !reflect.DeepEqual(got["waitForPodsReady"], want) {
		t.Errorf("waitForPodsReady = %v, want %v", got["waitForPodsReady"], want)
	}
	if addr, _, _ := unstructured.NestedString(got, "health", "healthProbeBindAddress"); addr != "127.0.0.1:1" {
		t.Errorf("health.healthProbeBindAddress = %v, want the arena's 127.0.0.1:1", addr)
	}
}

func TestScenarioConfigurationMayNotChangeHowTheArenaRunsKueue(t *testing.T) {
	for name, policy := range map[string]string{
		"webhook": "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwebhook: {port: 1}\n",
		"v1beta1": "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nwaitForPodsReady: {enable: true}\n",
		"Configuration": "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n---\n" +
			"apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n",
	} {
		if _, err := KueueConfigurationOverlay(policy); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want one naming %q", name, err, name)
		}
	}
}

// The Configuration is the manager's file, not an object to apply.
func TestKueueMeaningLeavesTheConfigurationOut(t *testing.T) {
	meant, err := KueueMeaning(loadFixed(t, "admission-fair-sharing").Policy)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(meant, "Configuration") || !strings.Contains(meant, "UsageBasedAdmissionFairSharing") {
		t.Errorf("KueueMeaning kept the Configuration or lost the ClusterQueue:\n%s", meant)
	}
}

func TestScenarioAnnotationsReachThePodsAndTheArenasOwnWin(t *testing.T) {
	a := Arrival{Name: "g", Pods: 2, Runtime: time.Second, Queue: QueueRef{Namespace: "ns", LocalQueue: "q"},
		Annotations: map[string]string{"kueue.x-k8s.io/podset-required-topology": "rack", AttemptAnnotation: "9"}}
	pod := a.Pod(1, 0, "s")
	if got := pod.Annotations["kueue.x-k8s.io/podset-required-topology"]; got != "rack" {
		t.Errorf("topology annotation = %q, want rack", got)
	}
	if got := pod.Annotations[AttemptAnnotation]; got != "0" {
		t.Errorf("attempt annotation = %q, want the arena's 0", got)
	}
}

// A workload whose pods ran in two racks lists both and counts as across
// domains; one in a single rack does not; a scenario without DomainLabel
// measures nothing.
func TestWorkloadDomainsListEachWorkloadsRacks(t *testing.T) {
	arrivals := []Arrival{
		{Name: "one", Pods: 2, Queue: QueueRef{Namespace: "ns"}},
		{Name: "two", Pods: 2, Queue: QueueRef{Namespace: "ns"}},
	}
	pods := []PodRecord{
		{Workload: "ns/one", Member: 0, Node: "n1"}, {Workload: "ns/one", Member: 1, Node: "n2"},
		{Workload: "ns/two", Member: 0, Node: "n1"}, {Workload: "ns/two", Member: 1, Node: "n3"},
	}
	in := MeasureInput{Arrivals: arrivals, Pods: pods, DomainLabel: "rack", NodeLabels: map[string]map[string]string{
		"n1": {"rack": "r1"}, "n2": {"rack": "r1"}, "n3": {"rack": "r2"}}}
	got := workloadDomains(in, groupWorkloads(in))
	want := map[string][]string{"ns/one": {"r1"}, "ns/two": {"r1", "r2"}}
	if !reflect.DeepEqual(got, want) || acrossDomains(got) != 1 {
		t.Errorf("domains = %v (across %d), want %v (across 1)", got, acrossDomains(got), want)
	}
	in.DomainLabel = ""
	if got := workloadDomains(in, groupWorkloads(in)); got != nil {
		t.Errorf("without DomainLabel: %v, want nil", got)
	}
}

// Only a member's first pod is held back; its replacements are Ready at
// once.
func TestFirstReadyAfterHoldsOnlyTheFirstAttempt(t *testing.T) {
	a := Arrival{Name: "g", Pods: 1, Runtime: time.Second, FirstReadyAfter: 40 * time.Second}
	if got := a.Pod(0, 0, "s").Annotations[kubelet.ReadyAfterAnnotation]; got != "40s" {
		t.Errorf("first pod's ready-after = %q, want 40s", got)
	}
	if got, ok := a.Pod(0, 1, "s").Annotations[kubelet.ReadyAfterAnnotation]; ok {
		t.Errorf("replacement's ready-after = %q, want none", got)
	}
}
