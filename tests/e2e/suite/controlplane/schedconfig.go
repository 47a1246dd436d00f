package controlplane

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// schedulerConfig reads deploy/kube-scheduler-config.yaml and changes only
// what differs between a pod and this loopback control plane: the
// kubeconfig (in a pod, the ServiceAccount), leader election (one instance
// here) and the extender's port (free, not 8888). Then the test's hook may
// change anything.
func schedulerConfig(repo, kubeconfig string, gpuschedPort int, hook func(map[string]any)) ([]byte, error) {
	path := filepath.Join(repo, "deploy", "kube-scheduler-config.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scheduler config: %w", err)
	}
	var config map[string]any
	if err := yaml.Unmarshal(data, &config); err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", path, err)
	}
	section := func(name string) (map[string]any, error) {
		m, ok := config[name].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("scheduler config %s: no %s mapping", path, name)
		}
		return m, nil
	}
	client, err := section("clientConnection")
	if err != nil {
		return nil, err
	}
	client["kubeconfig"] = kubeconfig
	election, err := section("leaderElection")
	if err != nil {
		return nil, err
	}
	election["leaderElect"] = false
	extenders, _ := config["extenders"].([]any)
	if len(extenders) == 0 {
		return nil, fmt.Errorf("scheduler config %s: no extenders", path)
	}
	first, ok := extenders[0].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("scheduler config %s: extenders[0] is not a mapping", path)
	}
	first["urlPrefix"] = fmt.Sprintf("http://127.0.0.1:%d", gpuschedPort)
	if hook != nil {
		hook(config)
	}
	out, err := yaml.Marshal(config)
	if err != nil {
		return nil, fmt.Errorf("scheduler config: %w", err)
	}
	return out, nil
}
