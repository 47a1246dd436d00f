package suite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// TestKueuePolicyComponentRendersAndTheAPIServerAcceptsEveryObject renders
// deploy/ with the kueue-policy component, as a site's kustomization that
// lists it would, and has the real API server validate every object: no
// policy file, --policy-source=kueue, and RBAC for Kueue's objects and
// their status, nothing more (whether a Kueue manager is active, gpusched
// reads with ClusterRole gpusched, whatever the policy's source).
func TestKueuePolicyComponentRendersAndTheAPIServerAcceptsEveryObject(t *testing.T) {
	r := findRenderTools(t)
	cp := controlplane.Start(t, controlplane.Options{Run: &controlplane.Components{}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	objects := dryRunAcceptsEveryObject(ctx, t, cp, "kueue-policy", r.kustomize(ctx, t, kueuePolicyDir))
	checkExtenderRole(t, objects)
	checkKueuePolicyDeployment(t, objects)
	var clusterRole rbacv1.ClusterRole
	find(t, objects, "ClusterRole", "gpusched-kueue-policy", &clusterRole)
	read := []string{"list", "watch"}
	checkRules(t, "ClusterRole gpusched-kueue-policy", clusterRole.Rules, map[string][]string{
		"kueue.x-k8s.io/resourceflavors":            read,
		"kueue.x-k8s.io/clusterqueues":              read,
		"kueue.x-k8s.io/localqueues":                read,
		"kueue.x-k8s.io/cohorts":                    read,
		"kueue.x-k8s.io/workloadpriorityclasses":    read,
		"kueue.x-k8s.io/topologies":                 read,
		"kueue.x-k8s.io/admissionchecks":            read,
		"kueue.x-k8s.io/provisioningrequestconfigs": read,
		"kueue.x-k8s.io/clusterqueues/status":       {"patch"},
		"kueue.x-k8s.io/localqueues/status":         {"patch"},
		"autoscaling.x-k8s.io/provisioningrequests": {"create", "delete", "list", "watch"},
		"/podtemplates":                             {"create", "delete"},
	})
	checkBoundToGpusched(t, objects, "ClusterRoleBinding", "gpusched-kueue-policy")
}

// checkKueuePolicyDeployment: gpusched reads Kueue's objects, not a file,
// and mounts no policy.
func checkKueuePolicyDeployment(t *testing.T, objects []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objects {
		if o.GetKind() == "ConfigMap" && o.GetName() == "gpusched-policy" {
			t.Errorf("ConfigMap gpusched-policy is rendered with policy source kueue")
		}
	}
	var deployment appsv1.Deployment
	find(t, objects, "Deployment", "gpusched", &deployment)
	for _, c := range deployment.Spec.Template.Spec.Containers {
		if c.Name != "gpusched" {
			continue
		}
		if !slices.Contains(c.Args, "--policy-source=kueue") || slices.ContainsFunc(c.Args, func(a string) bool {
			return strings.HasPrefix(a, "--policy=")
		}) {
			t.Errorf("gpusched args %v: want --policy-source=kueue and no --policy", c.Args)
		}
		for _, m := range c.VolumeMounts {
			if m.Name == "policy" {
				t.Errorf("gpusched still mounts the policy volume at %s", m.MountPath)
			}
		}
	}
	for _, v := range deployment.Spec.Template.Spec.Volumes {
		if v.Name == "policy" {
			t.Errorf("the pod still has the policy volume")
		}
	}
}

// checkBoundToGpusched: the binding's one subject is gpusched's
// ServiceAccount.
func checkBoundToGpusched(t *testing.T, objects []*unstructured.Unstructured, kind, name string) {
	t.Helper()
	var binding struct {
		Subjects []rbacv1.Subject `json:"subjects"`
	}
	find(t, objects, kind, name, &binding)
	want := rbacv1.Subject{Kind: "ServiceAccount", Name: "gpusched", Namespace: controlplane.DeployNamespace}
	if len(binding.Subjects) != 1 || binding.Subjects[0] != want {
		t.Errorf("%s %s subjects %+v, want only %+v", kind, name, binding.Subjects, want)
	}
}

// TestHelmInstalledChartSchedulesAGang installs the chart with its default
// values on the real control plane with `helm install`, runs its
// Deployment's pod from the installed objects (RunDeploymentPod: the
// containers' own arguments, the installed ConfigMaps, and the chart's
// ServiceAccount with the chart's RBAC, for kube-scheduler and gpusched
// alike), and schedules a gang of four single-GPU pods, Kueue-labelled,
// through kube-scheduler to bound.
func TestHelmInstalledChartSchedulesAGang(t *testing.T) {
	r := findRenderTools(t)
	cp := controlplane.Start(t, controlplane.Options{
		Run:            &controlplane.Components{Kubelet: true},
		InstallsDeploy: true,
		// A webhook or an APIService behind a Service without pods
		// (nothing runs the Deployment's pods here) is then refused at
		// once, from its Endpoints, rather than dialled at a ClusterIP
		// nothing routes: the webhook's failurePolicy Ignore lets pods in
		// without a 3 s wait each.
		APIServerArgs: []string{"--enable-aggregator-routing=true"},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	out, err := cp.Helm(ctx, r.helm, "install", "gpusched", filepath.Join(r.repo, chartDir), "--namespace", "default")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("helm install:\n%s", out)
	if err := cp.RunDeploymentPod(ctx, controlplane.DeployNamespace, "gpusched"); err != nil {
		t.Fatal(err)
	}
	cluster.CreateDemoCluster(ctx, t, cp)
	const team, size = "team-a", 4 // a LocalQueue "training" of the chart's default policy
	if err := controlplane.EnsureNamespace(ctx, cp.Client, team); err != nil {
		t.Fatal(err)
	}
	for i := range size {
		pod := cluster.NewPod(team, fmt.Sprintf("gang-%d", i)).SchedulerName(cluster.SchedulerName).Gpus(1).
			Label(cluster.QueueLabel, "training").Label("kueue.x-k8s.io/pod-group-name", "gang").
			Annotation("kueue.x-k8s.io/pod-group-total-count", fmt.Sprint(size))
		if _, err := pod.Create(ctx, cp.Client); err != nil {
			t.Fatal(err)
		}
	}
	pods, err := cluster.WaitForPods(ctx, cp.Client, team, cluster.AllBound(size), cluster.SettleTimeout)
	if err != nil {
		t.Fatal(err)
	}
	for _, pod := range pods {
		// The policy's flavor h100 selects the H100 nodes.
		if !strings.HasPrefix(pod.Spec.NodeName, "dgx-h100-") {
			t.Errorf("pod %s bound to %s, not an H100 node of flavor h100", pod.Name, pod.Spec.NodeName)
		}
	}
	checkInstalledPodActedWithTheChartsRBAC(ctx, t, cp)
}

// checkInstalledPodActedWithTheChartsRBAC: kube-scheduler led on the
// chart's Lease, gpusched wrote its CA into the webhook configuration and
// the APIService, and neither was refused anything.
func checkInstalledPodActedWithTheChartsRBAC(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	lease, err := cp.Client.CoordinationV1().Leases(controlplane.DeployNamespace).Get(ctx, "gpusched", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("kube-scheduler's leader Lease: %v", err)
	}
	host, _ := os.Hostname()
	if holder := lease.Spec.HolderIdentity; holder == nil || !strings.HasPrefix(*holder, host+"_") {
		t.Errorf("Lease %s/gpusched held by %v, want this host's kube-scheduler (%s_...)", controlplane.DeployNamespace, holder, host)
	}
	webhook, err := cp.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, controlplane.WebhookConfigName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(webhook.Webhooks) != 1 || len(webhook.Webhooks[0].ClientConfig.CABundle) == 0 {
		t.Errorf("MutatingWebhookConfiguration %s: gpusched wrote no caBundle", webhook.Name)
	}
	dyn, err := dynamic.NewForConfig(cp.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	apiServices := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	service, err := dyn.Resource(apiServices).Get(ctx, controlplane.VisibilityAPIService, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if bundle, _, _ := unstructured.NestedString(service.Object, "spec", "caBundle"); bundle == "" {
		t.Errorf("APIService %s: gpusched wrote no caBundle", controlplane.VisibilityAPIService)
	}
	for _, component := range []string{controlplane.Gpusched, controlplane.KubeScheduler} {
		log, err := os.ReadFile(filepath.Join(cp.Dir, component+".log"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(log), "\n") {
			if strings.Contains(line, "forbidden") {
				t.Errorf("%s was refused by the chart's RBAC: %s", component, line)
			}
		}
	}
}
