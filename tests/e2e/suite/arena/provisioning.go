package arena

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"gpusched.io/e2e/suite/controlplane"
)

// AutoscalerApisModule holds the ProvisioningRequest CRD (cluster-
// autoscaler's), pinned in the suite's go.mod but not imported: its Go
// types pull in ginkgo.
const AutoscalerApisModule = "k8s.io/autoscaler/cluster-autoscaler/apis"

// ProvisioningRequests is the resource Kueue's (and gpusched's)
// provisioning admission check creates.
var ProvisioningRequests = schema.GroupVersionResource{
	Group: "autoscaling.x-k8s.io", Version: "v1", Resource: "provisioningrequests"}

// InstallProvisioningRequestCRD creates the CRD of the autoscaler apis
// module the suite's go.mod pins, from the module cache, and waits until
// it is served.
func InstallProvisioningRequestCRD(ctx context.Context, cp *controlplane.ControlPlane) error {
	mod, err := os.ReadFile(filepath.Join(cp.Repo, "tests", "e2e", "suite", "go.mod"))
	if err != nil {
		return err
	}
	pinned := regexp.MustCompile(regexp.QuoteMeta(AutoscalerApisModule) + ` (\S+)`).FindSubmatch(mod)
	if pinned == nil {
		return fmt.Errorf("go.mod pins no %s", AutoscalerApisModule)
	}
	cache := os.Getenv("GOMODCACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, "go", "pkg", "mod")
	}
	file := filepath.Join(cache, AutoscalerApisModule+"@"+string(pinned[1]), "config", "crd",
		"autoscaling.x-k8s.io_provisioningrequests.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("the ProvisioningRequest CRD: %w", err)
	}
	objects, err := controlplane.DecodeObjects(bytes.NewReader(data))
	if err != nil {
		return err
	}
	client, err := dynamic.NewForConfig(cp.RestConfig)
	if err != nil {
		return err
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, o := range objects {
		if _, err := client.Resource(crds).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := client.Resource(ProvisioningRequests).List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("ProvisioningRequests not served: %w", err)
	}
	return nil
}

// GrantGpuschedKueuePolicy binds deploy/kueue-policy's ClusterRole (read
// Kueue's objects, write their status, run the provisioning check) to
// gpusched's user, as `components: [kueue-policy]` does.
func GrantGpuschedKueuePolicy(ctx context.Context, cp *controlplane.ControlPlane) error {
	data, err := os.ReadFile(filepath.Join(cp.Repo, "deploy", "kueue-policy", "rbac.yaml"))
	if err != nil {
		return err
	}
	objects, err := controlplane.DecodeObjects(bytes.NewReader(data))
	if err != nil {
		return err
	}
	var role rbacv1.ClusterRole
	for _, o := range objects {
		if o.GetKind() == "ClusterRole" && o.GetName() == "gpusched-kueue-policy" {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
				return err
			}
		}
	}
	if role.Name == "" {
		return fmt.Errorf("deploy/kueue-policy/rbac.yaml has no ClusterRole gpusched-kueue-policy")
	}
	role.ResourceVersion = ""
	if _, err := cp.Client.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "gpusched-kueue-policy-e2e"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: controlplane.GpuschedUser}},
	}
	_, err = cp.Client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	return err
}

// ProvisionerSpec is a scenario's test provisioner, standing in for
// cluster-autoscaler (which needs a cloud), as Kueue's own tests do: every
// ProvisioningRequest of either arm gets condition Provisioned DelayMs
// after it first appears, or Failed when its name is in Fail. Request
// names are Kueue's, <workload>-<check>-<attempt>, in both arms.
type ProvisionerSpec struct {
	DelayMs int      `json:"delayMs"`
	Fail    []string `json:"fail,omitempty"`
}

// ProvisionRecord is one request the provisioner saw, times in ms from
// the replay's start.
type ProvisionRecord struct {
	Request   string  `json:"request"`
	SeenMs    float64 `json:"seen_ms"`
	DecidedMs float64 `json:"decided_ms"`
	Condition string  `json:"condition"`
}

// provisioner polls the arm's ProvisioningRequests and decides each once.
type provisioner struct {
	client dynamic.Interface
	spec   ProvisionerSpec
	start  time.Time
	mu     sync.Mutex
	seen   map[string]*ProvisionRecord
	done   chan struct{}
}

// startProvisioner runs until ctx ends; Records waits for that.
func startProvisioner(ctx context.Context, config *rest.Config, spec ProvisionerSpec, start time.Time) (*provisioner, error) {
	client, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	p := &provisioner{client: client, spec: spec, start: start, seen: map[string]*ProvisionRecord{}, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		_ = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			p.pass(ctx)
			return false, nil
		})
	}()
	return p, nil
}

func (p *provisioner) pass(ctx context.Context) {
	list, err := p.client.Resource(ProvisioningRequests).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	now := time.Since(p.start)
	for i := range list.Items {
		request := &list.Items[i]
		key := request.GetNamespace() + "/" + request.GetName()
		p.mu.Lock()
		record, ok := p.seen[key]
		if !ok {
			record = &ProvisionRecord{Request: key, SeenMs: ms(now)}
			p.seen[key] = record
		}
		due := record.Condition == "" && now >= time.Duration(record.SeenMs*float64(time.Millisecond))+
			time.Duration(p.spec.DelayMs)*time.Millisecond
		p.mu.Unlock()
		if due {
			p.decide(ctx, request, record, now)
		}
	}
}

func (p *provisioner) decide(ctx context.Context, request *unstructured.Unstructured, record *ProvisionRecord, now time.Duration) {
	condition := "Provisioned"
	if slices.Contains(p.spec.Fail, request.GetName()) {
		condition = "Failed"
	}
	conditions := []any{map[string]any{"type": condition, "status": "True", "reason": "ArenaProvisioner",
		"message": "set by the arena's test provisioner", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}
	if err := unstructured.SetNestedSlice(request.Object, conditions, "status", "conditions"); err != nil {
		return
	}
	if _, err := p.client.Resource(ProvisioningRequests).Namespace(request.GetNamespace()).
		UpdateStatus(ctx, request, metav1.UpdateOptions{}); err != nil {
		return // a conflict or a deleted request: the next pass sees it again
	}
	p.mu.Lock()
	record.Condition, record.DecidedMs = condition, ms(now)
	p.mu.Unlock()
}

// Records are the requests seen, in the order they appeared; call after
// the provisioner's context ended.
func (p *provisioner) Records() []ProvisionRecord {
	<-p.done
	out := make([]ProvisionRecord, 0, len(p.seen))
	for _, r := range p.seen {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].SeenMs != out[j].SeenMs {
			return out[i].SeenMs < out[j].SeenMs
		}
		return out[i].Request < out[j].Request
	})
	return out
}

// waitGpuschedListedRequests waits (up to 45 s: one absent-API poll) until
// gpusched's log says its ProvisioningRequest watch has listed.
func waitGpuschedListedRequests(ctx context.Context, t testing.TB, cp *controlplane.ControlPlane) {
	t.Helper()
	listed := regexp.MustCompile(`listed \d+ ProvisioningRequests`)
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 45*time.Second, true, func(context.Context) (bool, error) {
		log, err := os.ReadFile(filepath.Join(cp.Dir, "gpusched.log"))
		return err == nil && listed.Match(log), nil
	})
	if err != nil {
		t.Fatalf("gpusched never listed the ProvisioningRequests: %v", err)
	}
}
