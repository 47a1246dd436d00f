package suite_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/diff"
	sigsyaml "sigs.k8s.io/yaml"

	"gpusched.io/e2e/suite/controlplane"
)

// The chart, the kustomize component for Kueue's objects as the policy,
// and the suite's tests of them without a control plane.
const (
	chartDir            = "deploy/chart/gpusched"
	kueuePolicyDir      = "deploy/kueue-policy"
	kueuePolicySource   = "policy.source=kueue"
	helmRenderTimeout   = 60 * time.Second
	defaultNamespaceArg = "namespace.name=gpusched-system"
)

// renderTools are what rendering needs: the repository, the built kubectl
// (for its kustomize) and helm.
type renderTools struct {
	repo, kubectl, helm, home string
}

func findRenderTools(t *testing.T) renderTools {
	t.Helper()
	repo, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bins, err := controlplane.FindBinaries(repo)
	if err != nil {
		t.Fatal(err)
	}
	helm, err := controlplane.FindHelm(repo)
	if err != nil {
		t.Fatal(err)
	}
	return renderTools{repo: repo, kubectl: bins.Kubectl, helm: helm, home: t.TempDir()}
}

// helmTemplate renders the chart with `--set` values.
func (r renderTools) helmTemplate(ctx context.Context, t *testing.T, sets ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := r.helmTemplateErr(ctx, sets...)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, out)
}

func (r renderTools) helmTemplateErr(ctx context.Context, sets ...string) ([]byte, error) {
	args := []string{"template", "gpusched", filepath.Join(r.repo, chartDir)}
	for _, set := range sets {
		args = append(args, "--set", set)
	}
	return controlplane.RunHelm(ctx, r.helm, r.home, args...)
}

// kustomize renders deploy/ with components added (each a directory under
// the repository), as a kustomization of a site's own would:
// `resources: [deploy]` and `components: [...]`.
func (r renderTools) kustomize(ctx context.Context, t *testing.T, components ...string) []byte {
	t.Helper()
	dir := filepath.Join(r.home, "overlay")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// kustomize takes only relative paths to other kustomizations.
	rel := func(path string) string {
		p, err := filepath.Rel(dir, filepath.Join(r.repo, path))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	var k strings.Builder
	fmt.Fprintf(&k, "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [%s]\n", rel("deploy"))
	if len(components) > 0 {
		k.WriteString("components:\n")
		for _, c := range components {
			fmt.Fprintf(&k, "  - %s\n", rel(c))
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runKubectl(ctx, r.kubectl, "kustomize", dir)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func runKubectl(ctx context.Context, kubectl string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, kubectl, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kubectl %v: %w: %s", args, err, stderr.String())
	}
	return stdout.Bytes(), nil
}

func decode(t *testing.T, rendered []byte) []*unstructured.Unstructured {
	t.Helper()
	objects, err := controlplane.DecodeObjects(bytes.NewReader(rendered))
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

func objectKey(o *unstructured.Unstructured) string {
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

func byKey(objects []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	m := map[string]*unstructured.Unstructured{}
	for _, o := range objects {
		m[objectKey(o)] = o
	}
	return m
}

// sameObjects fails the test unless both sets hold the same objects (by
// kind, namespace and name), field by field, each difference shown.
func sameObjects(t *testing.T, wantWhat string, want []*unstructured.Unstructured, gotWhat string, got []*unstructured.Unstructured) {
	t.Helper()
	wants, gots := byKey(want), byKey(got)
	for _, key := range sortedKeys(wants, gots) {
		w, g := wants[key], gots[key]
		switch {
		case g == nil:
			t.Errorf("%s has %s, %s does not", wantWhat, key, gotWhat)
		case w == nil:
			t.Errorf("%s has %s, %s does not", gotWhat, key, wantWhat)
		case !reflect.DeepEqual(w.Object, g.Object):
			t.Errorf("%s differs (- %s, + %s):\n%s", key, wantWhat, gotWhat, diff.Diff(w.Object, g.Object))
		}
	}
	if len(want) != len(wants) || len(got) != len(gots) {
		t.Errorf("an object twice: %s %d objects (%d keys), %s %d (%d keys)", wantWhat, len(want), len(wants), gotWhat, len(got), len(gots))
	}
}

func sortedKeys(sets ...map[string]*unstructured.Unstructured) []string {
	var keys []string
	for _, set := range sets {
		for key := range set {
			if !slices.Contains(keys, key) {
				keys = append(keys, key)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// TestHelmLintPassesForEveryValueChoice lints the chart with the real
// helm, strictly, with the defaults and with each choice a value offers.
func TestHelmLintPassesForEveryValueChoice(t *testing.T) {
	r := findRenderTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), helmRenderTimeout)
	defer cancel()
	for _, sets := range [][]string{
		nil,
		{kueuePolicySource},
		{"webhook.enabled=false", "visibility.enabled=false", "metrics.service=false"},
		{"namespace.name=ml-scheduling", "namespace.create=false", "replicas=1"},
	} {
		args := []string{"lint", "--strict", filepath.Join(r.repo, chartDir)}
		for _, set := range sets {
			args = append(args, "--set", set)
		}
		if out, err := controlplane.RunHelm(ctx, r.helm, r.home, args...); err != nil {
			t.Errorf("helm lint with %v: %v\n%s", sets, err, out)
		}
	}
}

// TestHelmTemplateRendersWhatKustomizeRenders: with the default values the
// chart renders deploy/'s objects exactly as `kubectl kustomize deploy/`
// does, and with policy.source=kueue exactly as deploy/ with the
// kueue-policy component.
func TestHelmTemplateRendersWhatKustomizeRenders(t *testing.T) {
	r := findRenderTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), helmRenderTimeout)
	defer cancel()
	kustomized := decode(t, r.kustomize(ctx, t))
	sameObjects(t, "kubectl kustomize deploy/", kustomized, "helm template", r.helmTemplate(ctx, t))
	// The namespace's default, given: the same objects.
	sameObjects(t, "kubectl kustomize deploy/", kustomized, "helm template --set "+defaultNamespaceArg,
		r.helmTemplate(ctx, t, defaultNamespaceArg))
	sameObjects(t, "kustomize with "+kueuePolicyDir, decode(t, r.kustomize(ctx, t, kueuePolicyDir)),
		"helm template --set "+kueuePolicySource, r.helmTemplate(ctx, t, kueuePolicySource))
}

// TestHelmValuesRemoveWhatTheyTurnOff: the webhook, the visibility API and
// the metrics Service, turned off, leave no object, rule, port or flag of
// theirs behind, and change nothing else.
func TestHelmValuesRemoveWhatTheyTurnOff(t *testing.T) {
	r := findRenderTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), helmRenderTimeout)
	defer cancel()
	defaults := r.helmTemplate(ctx, t)
	all, allText := byKey(defaults), objectsText(t, defaults, "ConfigMap")
	for _, c := range []struct {
		set     string
		removed []string
		traces  []string // no rendered text may name these
	}{
		{"webhook.enabled=false",
			[]string{"MutatingWebhookConfiguration /gpusched", "Service gpusched-system/gpusched-webhook"},
			// (Rules on webhook configurations of other names may stay.)
			[]string{"gpusched-webhook", "9443", "webhook-listen", "resourceNames:\n  - gpusched\n  resources:\n  - mutatingwebhookconfigurations"}},
		{"visibility.enabled=false",
			[]string{"APIService /v1alpha1.visibility.gpusched.io", "Service gpusched-system/gpusched-visibility",
				"ClusterRole /gpusched-visibility-viewer", "ClusterRole /gpusched-visibility-cluster-viewer"},
			[]string{"visibility", "apiservices", "subjectaccessreviews", "8443"}},
		{"metrics.service=false", []string{"Service gpusched-system/gpusched-metrics"}, []string{"http-metrics"}},
	} {
		rendered := r.helmTemplate(ctx, t, c.set)
		checkRemoved(t, c.set, all, byKey(rendered), c.removed)
		// The ConfigMaps hold configuration files whose comments may
		// name anything; every other object must be clean.
		text := objectsText(t, rendered, "ConfigMap")
		for _, trace := range c.traces {
			if !strings.Contains(allText, trace) {
				t.Errorf("the default values render no %q: a vacuous check", trace)
			}
			if strings.Contains(text, trace) {
				t.Errorf("--set %s: the rendered objects still name %q", c.set, trace)
			}
		}
	}
}

// checkRemoved: exactly the removed objects are gone, and those that stay
// are only the ones a listener's port, flag or rules are in.
func checkRemoved(t *testing.T, set string, all, rendered map[string]*unstructured.Unstructured, removed []string) {
	t.Helper()
	mayChange := []string{"Deployment gpusched-system/gpusched", "ClusterRole /gpusched", "Role gpusched-system/gpusched",
		"NetworkPolicy gpusched-system/gpusched"}
	for key, o := range all {
		got, kept := rendered[key]
		switch {
		case slices.Contains(removed, key) && kept:
			t.Errorf("--set %s: %s is still rendered", set, key)
		case !slices.Contains(removed, key) && !kept:
			t.Errorf("--set %s: %s is gone too", set, key)
		case kept && !slices.Contains(mayChange, key) && !reflect.DeepEqual(o.Object, got.Object):
			t.Errorf("--set %s changed %s:\n%s", set, key, diff.Diff(o.Object, got.Object))
		}
	}
	if len(rendered) != len(all)-len(removed) {
		t.Errorf("--set %s: %d objects, want %d", set, len(rendered), len(all)-len(removed))
	}
}

// objectsText is the objects as YAML, but those of the kinds left out.
func objectsText(t *testing.T, objects []*unstructured.Unstructured, leaveOut ...string) string {
	t.Helper()
	var b strings.Builder
	for _, o := range objects {
		if slices.Contains(leaveOut, o.GetKind()) {
			continue
		}
		out, err := sigsyaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(out)
	}
	return b.String()
}

// TestHelmNamespaceValueMovesEveryObject: namespace.name puts every object
// and every name of it (arguments, configuration, Secrets, Leases) in that
// namespace, but the binding that must live in kube-system; with
// namespace.create false the chart leaves the namespace to the admin.
func TestHelmNamespaceValueMovesEveryObject(t *testing.T) {
	r := findRenderTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), helmRenderTimeout)
	defer cancel()
	const namespace = "ml-scheduling"
	objects := r.helmTemplate(ctx, t, "namespace.name="+namespace, "namespace.create=false")
	for _, o := range objects {
		switch ns := o.GetNamespace(); {
		case o.GetKind() == "Namespace":
			t.Errorf("namespace.create=false still renders Namespace %s", o.GetName())
		case ns != namespace && ns != "" && objectKey(o) != "RoleBinding kube-system/gpusched-extension-apiserver-authentication-reader":
			t.Errorf("%s is not in %s", objectKey(o), namespace)
		}
	}
	if text := objectsText(t, objects); strings.Contains(text, "gpusched-system") {
		t.Errorf("the objects in %s still name gpusched-system:\n%s", namespace, text)
	}
	var args []string
	for _, o := range objects {
		if o.GetKind() == "Deployment" {
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				if c.(map[string]any)["name"] == "gpusched" {
					args, _, _ = unstructured.NestedStringSlice(c.(map[string]any), "args")
				}
			}
		}
	}
	for _, want := range []string{
		"--leader-lease=" + namespace + "/gpusched",
		"--webhook-secret=" + namespace + "/gpusched-webhook-tls",
		"--webhook-dns-names=gpusched-webhook." + namespace + ".svc,gpusched-webhook." + namespace + ".svc.cluster.local",
		"--visibility-secret=" + namespace + "/gpusched-visibility-tls",
		"--runtime-history=" + namespace + "/gpusched-runtime-history",
		"--requeue-state=" + namespace + "/gpusched-requeue-state",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("gpusched args %v: no %s", args, want)
		}
	}
}

// TestHelmRefusesValuesItDoesNotKnow: a wrong value, or a misspelt key
// (which Helm would otherwise ignore, silently installing the default), is
// an error naming it (values.schema.json), not a chart rendered without it.
func TestHelmRefusesValuesItDoesNotKnow(t *testing.T) {
	r := findRenderTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), helmRenderTimeout)
	defer cancel()
	for set, want := range map[string]string{
		"policy.source=kueu":         "at '/policy/source': value must be one of 'configMap', 'kueue'",
		"visiblity.enabled=false":    "additional properties 'visiblity' not allowed",
		"replicas=two":               "at '/replicas': got string, want integer",
		"namespace.name=Team_A":      "at '/namespace/name': 'Team_A' does not match pattern",
		"image.pullPolicy=Sometimes": "at '/image/pullPolicy': value must be one of",
	} {
		if _, err := r.helmTemplateErr(ctx, set); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("helm template --set %s: %v, want an error with %q", set, err, want)
		}
	}
}

// TestHelmPolicyContentValueIsThePolicyConfigMap: `--set-file
// policy.content=FILE` is the ConfigMap gpusched-policy's policy.yaml, to
// the byte, and changes no other object.
func TestHelmPolicyContentValueIsThePolicyConfigMap(t *testing.T) {
	r := findRenderTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), helmRenderTimeout)
	defer cancel()
	policy := "# one team\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: team-x\n"
	file := filepath.Join(r.home, "my-policy.yaml")
	if err := os.WriteFile(file, []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := controlplane.RunHelm(ctx, r.helm, r.home, "template", "gpusched", filepath.Join(r.repo, chartDir),
		"--set-file", "policy.content="+file)
	if err != nil {
		t.Fatal(err)
	}
	withFile := byKey(decode(t, out))
	const key = "ConfigMap gpusched-system/gpusched-policy"
	if got, _, _ := unstructured.NestedString(withFile[key].Object, "data", "policy.yaml"); got != policy {
		t.Errorf("%s policy.yaml %q, want the file's %q", key, got, policy)
	}
	for k, o := range byKey(r.helmTemplate(ctx, t)) {
		if withFile[k] == nil {
			t.Errorf("policy.content removed %s", k)
		} else if k != key && !reflect.DeepEqual(o.Object, withFile[k].Object) {
			t.Errorf("policy.content changed %s:\n%s", k, diff.Diff(o.Object, withFile[k].Object))
		}
	}
}

// TestHelmPackagedChartRendersAsTheDirectory: `helm package` resolves the
// links in files/ to deploy/'s files, so that the packaged chart, published
// on its own, renders exactly what the directory renders.
func TestHelmPackagedChartRendersAsTheDirectory(t *testing.T) {
	r := findRenderTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), helmRenderTimeout)
	defer cancel()
	dir := filepath.Join(r.home, "package")
	if _, err := controlplane.RunHelm(ctx, r.helm, r.home, "package", filepath.Join(r.repo, chartDir), "-d", dir); err != nil {
		t.Fatal(err)
	}
	archives, err := filepath.Glob(filepath.Join(dir, "gpusched-*.tgz"))
	if err != nil || len(archives) != 1 {
		t.Fatalf("helm package wrote %v (%v), want one gpusched-*.tgz", archives, err)
	}
	for _, sets := range [][]string{nil, {kueuePolicySource}} {
		args := []string{"template", "gpusched", archives[0]}
		for _, set := range sets {
			args = append(args, "--set", set)
		}
		out, err := controlplane.RunHelm(ctx, r.helm, r.home, args...)
		if err != nil {
			t.Fatal(err)
		}
		sameObjects(t, "the chart's directory", r.helmTemplate(ctx, t, sets...), "its package", decode(t, out))
	}
}
