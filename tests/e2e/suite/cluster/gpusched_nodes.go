package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// GpuschedNode is one node of gpusched's GET /v1/nodes (api/server's
// nodes_json.cc), the fields the tests read.
type GpuschedNode struct {
	Name     string
	Topology struct{ Source string }
	Gpus     []GpuschedGpu
	Mig      []GpuschedMigPool
	Pods     []GpuschedPod
	// Dra is present on nodes whose devices a DRA driver publishes.
	Dra *struct {
		Devices          int
		Taints, Problems []string
	}
}

// GpuschedGpu is one whole GPU: DraDevice names its DRA device ("gpu-3")
// on a DRA node.
type GpuschedGpu struct {
	Index     int
	Healthy   bool
	FreeMilli int
	DraDevice string
}

// GpuschedMigPool is the node's MIG instances of one profile.
type GpuschedMigPool struct {
	Resource, Profile    string
	Capacity, Used, Free int
	Pods                 []string
}

// GpuschedPod is a pod gpusched's model holds on the node.
type GpuschedPod struct {
	Name, UID   string
	GpuIDs      []int `json:"gpuIds"`
	MilliPerGpu int
	Mig         map[string]int
}

// GpuschedNodes reads gpusched's /v1/nodes.
func GpuschedNodes(ctx context.Context, gpuschedURL string) ([]GpuschedNode, error) {
	doc, err := gpuschedNodesDoc(ctx, gpuschedURL)
	return doc.Nodes, err
}

// GpuschedUndecidedSelector is a device selector outside gpusched's CEL
// subset, listed at the top of /v1/nodes: kube-scheduler alone decides
// where its requests fit.
type GpuschedUndecidedSelector struct {
	Expression, Error, DecidedBy string
	WrittenIn                    []string
	Objects                      int
}

// GpuschedUndecidedSelectors reads /v1/nodes' dra.selectorsOutsideSubset.
func GpuschedUndecidedSelectors(ctx context.Context, gpuschedURL string) ([]GpuschedUndecidedSelector, error) {
	doc, err := gpuschedNodesDoc(ctx, gpuschedURL)
	return doc.Dra.SelectorsOutsideSubset, err
}

type gpuschedNodesDocument struct {
	Nodes []GpuschedNode
	Dra   struct{ SelectorsOutsideSubset []GpuschedUndecidedSelector }
}

func gpuschedNodesDoc(ctx context.Context, gpuschedURL string) (gpuschedNodesDocument, error) {
	var doc gpuschedNodesDocument
	status, body, err := gpuschedGet(ctx, gpuschedURL, "/v1/nodes")
	if err != nil || status != http.StatusOK {
		return doc, fmt.Errorf("gpusched /v1/nodes: status %d, %v: %.200s", status, err, body)
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return doc, fmt.Errorf("gpusched /v1/nodes: %w", err)
	}
	return doc, nil
}

// gpuschedGet GETs path from gpusched's HTTP server, waiting 5 s at most.
func gpuschedGet(ctx context.Context, gpuschedURL, path string) (status int, body []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, gpuschedURL+path, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("gpusched %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}
