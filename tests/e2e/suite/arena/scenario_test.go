package arena

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"gpusched.io/e2e/suite/controlplane"
	"gpusched.io/e2e/suite/kubelet"
)

func loadFixed(t *testing.T, name string) *Scenario {
	t.Helper()
	repo, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadScenario(ScenarioPath(repo, name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestFixedScenariosLoadWithTheirStatedSizes(t *testing.T) {
	cases := []struct {
		name                  string
		workloads, pods       int
		clusterQueues, quota  int64
		nodeGPUs, scaleFactor float64
	}{
		// 6 queues x (35 + 10 + 5) workloads; 6 x (35x1 + 10x5 + 5x20) pods.
		{name: "baseline", workloads: 300, pods: 1110, clusterQueues: 6, quota: 120, nodeGPUs: 120, scaleFactor: 0.02},
		// 3 x (18 + 5 + 3); 3 x (18 + 25 + 60).
		{name: "smoke", workloads: 78, pods: 309, clusterQueues: 3, quota: 60, nodeGPUs: 64, scaleFactor: 0.005},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := loadFixed(t, c.name)
			workloads, pods := s.Totals()
			if workloads != c.workloads || pods != c.pods {
				t.Errorf("%d workloads, %d pods; want %d, %d", workloads, pods, c.workloads, c.pods)
			}
			info, err := ParsePolicy(s.Policy)
			if err != nil {
				t.Fatal(err)
			}
			var quota int64
			for _, cq := range info.ClusterQueues {
				quota += info.NominalGPUs[cq]
			}
			if int64(len(info.ClusterQueues)) != c.clusterQueues || quota != c.quota {
				t.Errorf("%d ClusterQueues with %d nominal GPUs; want %d, %d", len(info.ClusterQueues), quota, c.clusterQueues, c.quota)
			}
			_, gpus := s.Nodes.Total()
			if got := float64(gpus); got != c.nodeGPUs || got < float64(quota) {
				t.Errorf("nodes hold %v GPUs, want %v (at least the quota %d)", got, c.nodeGPUs, quota)
			}
			if s.Scale.Factor != c.scaleFactor {
				t.Errorf("scale factor %v, want %v", s.Scale.Factor, c.scaleFactor)
			}
			if meant, err := KueueMeaning(s.Policy); err != nil || strings.Count(meant, "namespaceSelector: {}") != int(c.clusterQueues) {
				t.Errorf("KueueMeaning: %v; every ClusterQueue should state namespaceSelector: {} itself", err)
			}
		})
	}
}

func TestScenarioRefusesAScaleThatDoesNotAddUp(t *testing.T) {
	s := loadFixed(t, "smoke")
	s.Scale.Factor = 0.01 // 3/30 x 0.05 = 0.005
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "scale.factor") {
		t.Fatalf("Check() = %v, want the factor refused", err)
	}
	s = loadFixed(t, "smoke")
	s.WorkloadSets[0].Count = 17 // round(350 x 0.05) = 18
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "kueueCount") {
		t.Fatalf("Check() = %v, want the count refused", err)
	}
}

func TestScenarioRefusesAQueueThePolicyLacks(t *testing.T) {
	s := loadFixed(t, "smoke")
	s.Queues[0].LocalQueue = "nowhere"
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "no LocalQueue") {
		t.Fatalf("Check() = %v, want the queue refused", err)
	}
}

func TestArrivalsFollowKueuesGeneratorTimes(t *testing.T) {
	s := loadFixed(t, "smoke")
	arrivals := s.Arrivals()
	if workloads, _ := s.Totals(); len(arrivals) != workloads {
		t.Fatalf("%d arrivals, want %d", len(arrivals), workloads)
	}
	// The first: small workload 0 of the first queue at 1 x 100 ms. The
	// last: large workload 2 of the last queue at 3 x 1200 ms.
	first, last := arrivals[0], arrivals[len(arrivals)-1]
	if first.At != 100*time.Millisecond || first.Name != "small-0-0" || first.Queue != s.Queues[0] {
		t.Errorf("first arrival %+v", first)
	}
	if last.At != 3600*time.Millisecond || last.Name != "large-2-2" || last.Queue != s.Queues[2] || last.Pods != 20 {
		t.Errorf("last arrival %+v", last)
	}
	for i := 1; i < len(arrivals); i++ {
		if arrivals[i].At < arrivals[i-1].At {
			t.Fatalf("arrival %d at %v before %d at %v", i, arrivals[i].At, i-1, arrivals[i-1].At)
		}
	}
}

func TestTimeScaleAndJitterStretchArrivalsDeterministically(t *testing.T) {
	s := loadFixed(t, "smoke")
	s.TimeScale, s.JitterMs = 2, 50
	a, b := s.Arrivals(), s.Arrivals()
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			t.Fatalf("arrival %d differs between two calls: %+v vs %+v", i, a[i], b[i])
		}
	}
	for _, x := range a {
		if x.Name == "large-2-0" && x.Queue == s.Queues[0] {
			// 2 x (1 x 1200 ms) + 2 x [0, 50) ms; runtime 2 x 1 s.
			if x.At < 2400*time.Millisecond || x.At >= 2500*time.Millisecond || x.Runtime != 2*time.Second {
				t.Errorf("large-2-0 at %v running %v", x.At, x.Runtime)
			}
		}
	}
}

func TestArrivalPodIsAKueuePodGroupMemberBothArmsRead(t *testing.T) {
	a := loadFixed(t, "smoke").Arrivals()[0]
	pod := a.Pod(0, 1, "gpusched")
	checks := map[string]string{
		"name":                       pod.Name,
		QueueNameLabel:               pod.Labels[QueueNameLabel],
		PodGroupNameLabel:            pod.Labels[PodGroupNameLabel],
		PriorityClassLabel:           pod.Labels[PriorityClassLabel],
		PodGroupTotalCountAnnotation: pod.Annotations[PodGroupTotalCountAnnotation],
		kubelet.RunForAnnotation:     pod.Annotations[kubelet.RunForAnnotation],
		"schedulerName":              pod.Spec.SchedulerName,
	}
	want := map[string]string{
		"name": "small-0-0-m0-r1", QueueNameLabel: "cq-0-0-cohort-0", PodGroupNameLabel: "small-0-0",
		PriorityClassLabel: "small", PodGroupTotalCountAnnotation: "1", kubelet.RunForAnnotation: "200ms",
		"schedulerName": "gpusched",
	}
	for k, v := range want {
		if checks[k] != v {
			t.Errorf("%s = %q, want %q", k, checks[k], v)
		}
	}
	if n := len(pod.Spec.Containers[0].Resources.Requests); n != 1 {
		t.Errorf("%d requests, want nvidia.com/gpu only: %v", n, pod.Spec.Containers[0].Resources.Requests)
	}
}
