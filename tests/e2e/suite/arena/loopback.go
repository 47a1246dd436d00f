package arena

import (
	"encoding/base64"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// pointAtLoopback rewrites every clientConfig of the install, the
// admission webhooks' and the CRD conversion webhooks', from Kueue's
// webhook Service to the same path at baseURL (https://127.0.0.1:PORT,
// the manager's webhook server), trusting caPEM. Nothing else changes:
// rules, namespace selectors and failure policies are the release's.
func pointAtLoopback(objs []*unstructured.Unstructured, baseURL string, caPEM []byte) error {
	for _, obj := range objs {
		var err error
		switch obj.GetKind() {
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			err = pointWebhooks(obj, baseURL, caPEM)
		case "CustomResourceDefinition":
			err = pointConversion(obj, baseURL, caPEM)
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

func pointWebhooks(obj *unstructured.Unstructured, baseURL string, caPEM []byte) error {
	webhooks, _, err := unstructured.NestedSlice(obj.Object, "webhooks")
	if err != nil {
		return err
	}
	for i, w := range webhooks {
		webhook, ok := w.(map[string]any)
		if !ok {
			return fmt.Errorf("webhooks[%d] is not a mapping", i)
		}
		config, err := loopbackClientConfig(webhook, baseURL, caPEM)
		if err != nil {
			return fmt.Errorf("webhook %v: %w", webhook["name"], err)
		}
		webhook["clientConfig"] = config
	}
	return unstructured.SetNestedSlice(obj.Object, webhooks, "webhooks")
}

// pointConversion changes a CRD whose conversion strategy is Webhook.
func pointConversion(obj *unstructured.Unstructured, baseURL string, caPEM []byte) error {
	webhook, found, err := unstructured.NestedMap(obj.Object, "spec", "conversion", "webhook")
	if err != nil || !found {
		return err
	}
	config, err := loopbackClientConfig(webhook, baseURL, caPEM)
	if err != nil {
		return err
	}
	return unstructured.SetNestedMap(obj.Object, config, "spec", "conversion", "webhook", "clientConfig")
}

// loopbackClientConfig is {url, caBundle} for the service path of
// holder's clientConfig.
func loopbackClientConfig(holder map[string]any, baseURL string, caPEM []byte) (map[string]any, error) {
	path, found, err := unstructured.NestedString(holder, "clientConfig", "service", "path")
	if err != nil || !found {
		return nil, fmt.Errorf("clientConfig has no service path (found %v, %v)", found, err)
	}
	return map[string]any{
		"url":      baseURL + path,
		"caBundle": base64.StdEncoding.EncodeToString(caPEM),
	}, nil
}
