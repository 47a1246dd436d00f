package arena

import (
	"strings"
	"testing"
)

// The files of scenarios 3 and 4 load with the sizes their headers state.
func TestGangAndReclaimScenariosLoadWithTheirStatedSizes(t *testing.T) {
	cases := []struct {
		name                        string
		workloads, pods, gpuSeconds int
		quota                       int64
	}{
		// 40 + 81 singles, 6 gangs of 8 x 1, 3 of 4 x 8 GPUs; quota 10 x the cluster.
		{name: "fragmented", workloads: 130, pods: 181, gpuSeconds: 3122, quota: 640},
		// team-b 14 workloads (28 pods, 64 GPUs x 40 s), team-a 6 (14 pods, 32 GPUs x 10 s).
		{name: "reclaim", workloads: 20, pods: 42, gpuSeconds: 64*40 + 32*10, quota: 64},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := loadFixed(t, c.name)
			workloads, pods := s.Totals()
			gpuSeconds := 0
			for _, a := range s.Arrivals() {
				gpuSeconds += a.Pods * a.GPUs() * int(a.Runtime.Seconds())
			}
			if workloads != c.workloads || pods != c.pods || gpuSeconds != c.gpuSeconds {
				t.Errorf("%d workloads, %d pods, %d GPU-s; want %d, %d, %d", workloads, pods, gpuSeconds, c.workloads, c.pods, c.gpuSeconds)
			}
			info, err := ParsePolicy(s.Policy)
			if err != nil {
				t.Fatal(err)
			}
			var quota int64
			for _, cq := range info.ClusterQueues {
				quota += info.NominalGPUs[cq]
			}
			if _, gpus := s.Nodes.Total(); quota != c.quota || gpus != 64 {
				t.Errorf("quota %d on %d GPUs; want %d on 64", quota, gpus, c.quota)
			}
			if meant, err := KueueMeaning(s.Policy); err != nil || strings.Count(meant, "namespaceSelector: {}") != len(info.ClusterQueues) {
				t.Errorf("KueueMeaning: %v; every ClusterQueue should state namespaceSelector: {} itself", err)
			}
		})
	}
}
