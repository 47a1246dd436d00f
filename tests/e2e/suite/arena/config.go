package arena

import (
	"fmt"
	"slices"
	"time"

	"sigs.k8s.io/yaml"
)

// WaitForPodsReady is Kueue's waitForPodsReady: an admitted workload whose
// pods are not all Ready within Timeout is evicted and requeued.
type WaitForPodsReady struct {
	// Timeout must be stated: Kueue refuses the section without one.
	Timeout time.Duration
	// BlockAdmission holds further admissions until the admitted
	// workloads' pods are Ready.
	BlockAdmission bool
}

// Config is what a test chooses of Kueue's Configuration; the rest is the
// release's own (its ConfigMap), with only what loopback needs changed.
type Config struct {
	// Namespaces are where Kueue manages pods and Jobs
	// (managedJobsNamespaceSelector: kubernetes.io/metadata.name In ...).
	Namespaces []string
	// Frameworks replace integrations.frameworks; nil keeps the release's
	// list. Either way it must hold "pod".
	Frameworks []string
	// WaitForPodsReady, if set, turns waitForPodsReady on.
	WaitForPodsReady *WaitForPodsReady
	// FairSharing turns fair sharing on with Kueue's default preemption
	// strategies.
	FairSharing bool
	// ClientQPS, if set, is the manager's clientConnection qps (burst
	// twice that) instead of the release's.
	ClientQPS int
	// Overlay replaces whole sections of the configuration last (a
	// scenario's own Kueue Configuration: KueueConfigurationOverlay),
	// waitForPodsReady included.
	Overlay map[string]any
}

// ports are the manager's listeners, each on 127.0.0.1.
type ports struct {
	Health, Metrics, Webhook, Visibility int
}

// managerConfig is the release's Configuration base with c's choices and
// what running on loopback needs:
//   - every listener on 127.0.0.1 at a free port (the Deployment's are
//     fixed ports on the pod's own address);
//   - internalCertManagement off, the webhook server's certificate in
//     certDir (the test's CA signed it; see servingCert);
//   - leader election on, as shipped, with its Lease in namespace (the
//     Role the release grants is there; outside a pod controller-runtime
//     cannot guess the namespace).
func managerConfig(base map[string]any, c Config, p ports, namespace, certDir string) ([]byte, error) {
	cfg, err := deepCopy(base)
	if err != nil {
		return nil, err
	}
	if len(c.Namespaces) == 0 {
		return nil, fmt.Errorf("kueue config: no Namespaces to manage")
	}
	cfg["namespace"] = namespace
	section(cfg, "health")["healthProbeBindAddress"] = fmt.Sprintf("127.0.0.1:%d", p.Health)
	section(cfg, "metrics")["bindAddress"] = fmt.Sprintf("127.0.0.1:%d", p.Metrics)
	webhook := section(cfg, "webhook")
	webhook["host"], webhook["port"], webhook["certDir"] = "127.0.0.1", p.Webhook, certDir
	cfg["visibilityServer"] = map[string]any{"bindAddress": "127.0.0.1", "bindPort": p.Visibility}
	section(cfg, "leaderElection")["resourceNamespace"] = namespace
	cfg["internalCertManagement"] = map[string]any{"enable": false}
	if err := setFrameworks(cfg, c.Frameworks); err != nil {
		return nil, err
	}
	cfg["managedJobsNamespaceSelector"] = map[string]any{"matchExpressions": []any{map[string]any{
		"key": "kubernetes.io/metadata.name", "operator": "In", "values": c.Namespaces}}}
	if w := c.WaitForPodsReady; w != nil {
		cfg["waitForPodsReady"] = map[string]any{"timeout": w.Timeout.String(), "blockAdmission": w.BlockAdmission}
	}
	if c.ClientQPS > 0 {
		cfg["clientConnection"] = map[string]any{"qps": c.ClientQPS, "burst": 2 * c.ClientQPS}
	}
	if c.FairSharing {
		cfg["fairSharing"] = map[string]any{
			"preemptionStrategies": []any{"LessThanOrEqualToFinalShare", "LessThanInitialShare"}}
	}
	for key, value := range c.Overlay {
		cfg[key] = value
	}
	return yaml.Marshal(cfg)
}

// setFrameworks replaces integrations.frameworks when asked, then checks
// that the pod integration is on: the arena's workloads are plain pods.
func setFrameworks(cfg map[string]any, frameworks []string) error {
	integrations := section(cfg, "integrations")
	if frameworks != nil {
		integrations["frameworks"] = frameworks
	}
	var names []string
	list, _ := integrations["frameworks"].([]any)
	for _, f := range list {
		if name, ok := f.(string); ok {
			names = append(names, name)
		}
	}
	if s, ok := integrations["frameworks"].([]string); ok {
		names = s
	}
	if !slices.Contains(names, "pod") {
		return fmt.Errorf("kueue config: integrations.frameworks %v lacks \"pod\"", names)
	}
	return nil
}

// section is cfg[name] as a mapping, created when absent.
func section(cfg map[string]any, name string) map[string]any {
	m, ok := cfg[name].(map[string]any)
	if !ok {
		m = map[string]any{}
		cfg[name] = m
	}
	return m
}

func deepCopy(m map[string]any) (map[string]any, error) {
	data, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("kueue config: %w", err)
	}
	var out map[string]any
	if err := yaml.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("kueue config: %w", err)
	}
	return out, nil
}
