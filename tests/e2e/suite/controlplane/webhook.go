package controlplane

import (
	"context"
	"fmt"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Names of deploy/'s webhook objects, as gpusched's flags default to them.
const (
	WebhookConfigName = "gpusched"
	WebhookSecretName = "gpusched-webhook-tls"
	WebhookGate       = "gpusched.io/admission"
)

// webhookArgs serve the webhook on loopback with a certificate for the
// address the apiserver dials (an IP SAN for 127.0.0.1).
func (c *ControlPlane) webhookArgs(port int) []string {
	return []string{
		fmt.Sprintf("--webhook-listen=127.0.0.1:%d", port),
		"--webhook-dns-names=127.0.0.1,localhost",
	}
}

// registerWebhook creates deploy/'s MutatingWebhookConfiguration unchanged
// but for its clientConfig: a URL on loopback instead of the Service (there
// is no cluster network) and no caBundle (gpusched writes it).
func (c *ControlPlane) registerWebhook(ctx context.Context) error {
	if !c.opts.Webhook {
		return nil
	}
	c.WebhookURL = fmt.Sprintf("https://127.0.0.1:%d/mutate-pods", c.ports.webhook)
	if len(c.Replicas) > 0 {
		var targets []string
		for _, r := range c.Replicas {
			targets = append(targets, fmt.Sprintf("127.0.0.1:%d", r.webhookPort))
		}
		var err error
		if c.webhookService, err = newDelayProxy(targets...); err != nil {
			return err
		}
		c.WebhookURL = "https://" + c.webhookService.Addr() + "/mutate-pods"
	}
	objs, err := RenderDeploy(c.Repo, c.Bins.Kubectl)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if obj.GetKind() != "MutatingWebhookConfiguration" || obj.GetName() != WebhookConfigName {
			continue
		}
		var config admissionv1.MutatingWebhookConfiguration
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &config); err != nil {
			return fmt.Errorf("convert: %w", err)
		}
		for i := range config.Webhooks {
			config.Webhooks[i].ClientConfig = admissionv1.WebhookClientConfig{URL: &c.WebhookURL}
		}
		_, err := c.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &config, metav1.CreateOptions{})
		return err
	}
	return fmt.Errorf("deploy/ has no MutatingWebhookConfiguration %s", WebhookConfigName)
}
