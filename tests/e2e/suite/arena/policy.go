package arena

import (
	"fmt"
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
// Objects outside Kueue's group (gpusched's SchedulerConfig) are an
// error: they have no Kueue meaning to give.
func KueueMeaning(policy string) (string, error) {
	objs, err := controlplane.DecodeObjects(strings.NewReader(policy))
	if err != nil {
		return "", err
	}
	docs := make([]string, 0, len(objs))
	for _, obj := range objs {
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
