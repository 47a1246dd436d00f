package arena

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"gpusched.io/e2e/suite/controlplane"
)

// KueueMeaning rewrites a gpusched --policy (Kueue's kinds, e.g.
// cluster.KueuePolicy's) so that Kueue reads it as gpusched does, where
// the two differ (policies/policy_loader.h):
//   - a ClusterQueue without namespaceSelector admits from every namespace
//     in gpusched, from none in Kueue: it gets `namespaceSelector: {}`,
//     which is every namespace in both.
//
// A Kueue Configuration is left out: it is the manager's file, not an
// object (KueueConfigurationOverlay). Objects outside Kueue's group
// (gpusched's SchedulerConfig) are an error: they have no Kueue meaning to
// give.
func KueueMeaning(policy string) (string, error) {
	objs, err := controlplane.DecodeObjects(strings.NewReader(policy))
	if err != nil {
		return "", err
	}
	docs := make([]string, 0, len(objs))
	for _, obj := range objs {
		if isKueueConfiguration(obj) {
			continue // the manager's, not an object (KueueConfigurationOverlay)
		}
		if group := obj.GroupVersionKind().Group; group != KueueGroup {
			return "", fmt.Errorf("policy: %s %s is in group %q, not %s", obj.GetKind(), objectName(obj), group, KueueGroup)
		}
		if err := everyNamespaceWhenUnset(obj); err != nil {
			return "", err
		}
		text, err := yaml.Marshal(obj.Object)
		if err != nil {
			return "", fmt.Errorf("policy: %w", err)
		}
		docs = append(docs, string(text))
	}
	return strings.Join(docs, "---\n"), nil
}

func everyNamespaceWhenUnset(obj *unstructured.Unstructured) error {
	if obj.GetKind() != "ClusterQueue" {
		return nil
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "namespaceSelector"); found {
		return nil
	}
	return unstructured.SetNestedMap(obj.Object, map[string]any{}, "spec", "namespaceSelector")
}

// KueueConfigGroup is the API group of Kueue's manager Configuration.
const KueueConfigGroup = "config." + KueueGroup

func isKueueConfiguration(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == KueueConfigGroup && gvk.Kind == "Configuration"
}

// overlaySections are the sections of a Kueue Configuration a scenario
// may set: scheduling semantics. The rest (listeners, certificates,
// leader election, namespaces, integrations) is how the arena runs the
// manager (managerConfig) and is not the scenario's to change.
var overlaySections = []string{"waitForPodsReady", "fairSharing", "admissionFairSharing", "resources"}

// KueueConfigurationOverlay is the policy's Kueue Configuration as the
// sections the Kueue arm's manager config takes over (Config.Overlay):
// nil when the policy has none. It must be config.kueue.x-k8s.io/v1beta2,
// the version of the release's own file, so the sections mean the same.
func KueueConfigurationOverlay(policy string) (map[string]any, error) {
	objs, err := controlplane.DecodeObjects(strings.NewReader(policy))
	if err != nil {
		return nil, err
	}
	var overlay map[string]any
	for _, obj := range objs {
		if !isKueueConfiguration(obj) {
			continue
		}
		if overlay != nil {
			return nil, fmt.Errorf("policy: more than one Kueue Configuration")
		}
		if v := obj.GroupVersionKind().Version; v != "v1beta2" {
			return nil, fmt.Errorf("policy: Kueue Configuration %s/%s; the arena takes v1beta2, the release's own", KueueConfigGroup, v)
		}
		overlay = map[string]any{}
		for key, value := range obj.Object {
			switch {
			case key == "apiVersion" || key == "kind":
			case slices.Contains(overlaySections, key):
				overlay[key] = value
			default:
				return nil, fmt.Errorf("policy: Kueue Configuration section %q: the arena takes only %v", key, overlaySections)
			}
		}
	}
	return overlay, nil
}
