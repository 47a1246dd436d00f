package suite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// Gangs declared by PodGroup objects of the two gang APIs gpusched reads:
// Volcano's (pods name it in the scheduling.k8s.io/group-name annotation)
// and the coscheduling plugin's (the scheduling.x-k8s.io/pod-group label).
// Only the PodGroup says how many members make the gang (spec.minMember):
// a gpusched that did not read it would admit the first member alone.

// podGroupAPI is one of the two PodGroup CRDs, as its project ships it in
// the fields that matter here (served version, scope, status subresource);
// the schema keeps every field, as the projects' own schemas accept the
// ones used here.
type podGroupAPI struct {
	group, version    string
	statusSubresource bool
	// memberOf marks a pod as a member of the named group.
	memberOf func(b *cluster.PodBuilder, group string) *cluster.PodBuilder
}

var (
	volcanoAPI = podGroupAPI{group: "scheduling.volcano.sh", version: "v1beta1",
		memberOf: func(b *cluster.PodBuilder, group string) *cluster.PodBuilder {
			return b.Annotation("scheduling.k8s.io/group-name", group)
		}}
	coschedulingAPI = podGroupAPI{group: "scheduling.x-k8s.io", version: "v1alpha1", statusSubresource: true,
		memberOf: func(b *cluster.PodBuilder, group string) *cluster.PodBuilder {
			return b.Label("scheduling.x-k8s.io/pod-group", group)
		}}
)

func (a podGroupAPI) resource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: a.group, Version: a.version, Resource: "podgroups"}
}

func (a podGroupAPI) crd() string {
	status := ""
	if a.statusSubresource {
		status = "\n    subresources: {status: {}}"
	}
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: podgroups.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {kind: PodGroup, plural: podgroups, singular: podgroup, listKind: PodGroupList}
  versions:
  - name: %[2]s
    served: true
    storage: true%[3]s
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, a.group, a.version, status)
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installPodGroupCRD creates the CRD and waits until the API server serves it.
func installPodGroupCRD(ctx context.Context, t *testing.T, client dynamic.Interface, api podGroupAPI) {
	t.Helper()
	var crd unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(api.crd()), &crd.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource(crdResource).Create(ctx, &crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD %s: %v", crd.GetName(), err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := client.Resource(api.resource()).Namespace(cluster.Namespace).List(ctx, metav1.ListOptions{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD %s not served after 30 s: %v", crd.GetName(), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func createPodGroup(ctx context.Context, t *testing.T, client dynamic.Interface, api podGroupAPI, name string, minMember int) {
	t.Helper()
	group := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": api.group + "/" + api.version,
		"kind":       "PodGroup",
		"metadata":   map[string]any{"name": name, "namespace": cluster.Namespace},
		"spec":       map[string]any{"minMember": int64(minMember)},
	}}
	if _, err := client.Resource(api.resource()).Namespace(cluster.Namespace).Create(ctx, group, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create PodGroup %s: %v", name, err)
	}
}

// podGroupGangOptions: how the gangs of these tests differ.
type podGroupGangOptions struct {
	api podGroupAPI
	// crdLate installs the CRD after gpusched started (found absent,
	// then picked up by the poll).
	crdLate bool
	// cpuOnly members request no GPU (a launcher): held and admitted with
	// the gang all the same.
	cpuOnly int
}

const podGroupPollMs = "500"

// startPodGroupPlane starts the control plane with the webhook, the policy
// and a short PodGroup API poll, and returns it with a dynamic client for
// CRDs and PodGroups.
func startPodGroupPlane(t *testing.T, policy string) (*controlplane.ControlPlane, dynamic.Interface) {
	t.Helper()
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy,
		GpuschedArgs: []string{"--podgroup-api-poll-ms", podGroupPollMs}})
	client, err := dynamic.NewForConfig(cp.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	return cp, client
}

func runPodGroupGang(t *testing.T, o podGroupGangOptions) {
	cp, client := startPodGroupPlane(t, writeGangPolicy(t))
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	if !o.crdLate {
		installPodGroupCRD(ctx, t, client, o.api)
	}
	cluster.SetUpDemoCluster(ctx, t, cp)
	if o.crdLate {
		installPodGroupCRD(ctx, t, client, o.api)
	}
	const gpuMembers = 4
	members := gpuMembers + o.cpuOnly
	createPodGroup(ctx, t, client, o.api, "ring", members)
	for i := 0; i < members; i++ {
		b := cluster.NewPod(cluster.Namespace, fmt.Sprintf("ring-%d", i)).SchedulerName(cluster.SchedulerName).
			Label("kueue.x-k8s.io/queue-name", "q")
		if i < gpuMembers {
			b = b.Gpus(4)
		}
		if _, err := o.api.memberOf(b, "ring").Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
		if i < members-1 {
			time.Sleep(time.Second)
			checkNoneBound(ctx, t, cp)
		}
	}
	pods := waitAllBound(ctx, t, cp, members)
	var gpuPods []corev1.Pod
	for _, p := range pods {
		if _, asks := p.Spec.Containers[0].Resources.Limits[cluster.GpuResource]; asks {
			gpuPods = append(gpuPods, p)
			continue
		}
		if assigned := p.Annotations["gpusched.io/assigned-node"]; assigned != p.Spec.NodeName || len(p.Spec.SchedulingGates) != 0 {
			t.Errorf("CPU-only member %s: bound to %s, assigned %q, gates %v", p.Name, p.Spec.NodeName, assigned, gateNames(&p))
		}
	}
	if len(gpuPods) != gpuMembers {
		t.Fatalf("%d GPU members, want %d", len(gpuPods), gpuMembers)
	}
	checkGangPlacement(t, gpuPods, 4)
}

// TestVolcanoPodGroupGangIsBoundWhole: Volcano's CRD appears only after
// gpusched started; gpusched picks it up, reads minMember 4 and holds the
// members, created a second apart, until the fourth exists.
func TestVolcanoPodGroupGangIsBoundWhole(t *testing.T) {
	runPodGroupGang(t, podGroupGangOptions{api: volcanoAPI, crdLate: true})
}

// TestCoschedulingPodGroupGangWithCPUOnlyMemberIsBoundWhole: a coscheduling
// PodGroup of minMember 5: four 4-GPU workers and a launcher that asks for
// no GPU; the launcher is held by the gate and admitted with the workers.
func TestCoschedulingPodGroupGangWithCPUOnlyMemberIsBoundWhole(t *testing.T) {
	runPodGroupGang(t, podGroupGangOptions{api: coschedulingAPI, cpuOnly: 1})
}
