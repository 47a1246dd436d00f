package arena

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"gpusched.io/e2e/suite/controlplane"
)

// Manifests are Kueue's install as its release renders it (`kubectl
// kustomize config/default`, the source of its released manifests.yaml),
// sorted into what the arena applies and what it replaces.
type Manifests struct {
	// Install are applied in this order: the Namespace, CRDs, the
	// ServiceAccount and RBAC, then the webhook configurations.
	Install []*unstructured.Unstructured
	// ManagerConfig is the Configuration its Deployment mounts (ConfigMap
	// kueue-manager-config), the base of the arena's own.
	ManagerConfig map[string]any
	// Namespace and ServiceAccount are the manager's.
	Namespace, ServiceAccount string
}

// installOrder are the kinds applied, in order. Left out on purpose: the
// Deployment (the arena runs the binary), the Services and the
// internalCertManagement Secret (no cluster network: every clientConfig
// is a loopback URL instead), and the visibility APIServices (not
// registered yet: they need kube-apiserver's front proxy, see README).
var installOrder = []string{
	"Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
	"Role", "RoleBinding", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
}

// managerConfigKey is the ConfigMap key of the Configuration.
const managerConfigKey = "controller_manager_config.yaml"

// RenderManifests runs kubectl kustomize on the build's config/default.
func RenderManifests(kubectl string, b Build) (Manifests, error) {
	dir := filepath.Join(b.Config, "default")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Manifests{}, fmt.Errorf("kubectl kustomize %s: %w\n%s", dir, err, stderr.String())
	}
	objs, err := controlplane.DecodeObjects(&stdout)
	if err != nil {
		return Manifests{}, fmt.Errorf("kueue manifests: %w", err)
	}
	return sortManifests(objs)
}

// sortManifests picks the objects to install, in installOrder, and the
// manager's configuration, namespace and ServiceAccount.
func sortManifests(objs []*unstructured.Unstructured) (Manifests, error) {
	var m Manifests
	for _, kind := range installOrder {
		for _, obj := range objs {
			if obj.GetKind() == kind {
				m.Install = append(m.Install, obj)
			}
		}
	}
	for _, obj := range objs {
		switch obj.GetKind() {
		case "ServiceAccount":
			m.Namespace, m.ServiceAccount = obj.GetNamespace(), obj.GetName()
		case "ConfigMap":
			text, ok, _ := unstructured.NestedString(obj.Object, "data", managerConfigKey)
			if !ok {
				continue
			}
			if err := yaml.Unmarshal([]byte(text), &m.ManagerConfig); err != nil {
				return Manifests{}, fmt.Errorf("kueue %s: %w", managerConfigKey, err)
			}
		}
	}
	if m.ServiceAccount == "" || m.ManagerConfig == nil {
		return Manifests{}, fmt.Errorf("kueue manifests: no ServiceAccount or no ConfigMap with %s", managerConfigKey)
	}
	return m, nil
}
