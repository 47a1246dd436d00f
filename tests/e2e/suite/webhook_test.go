package suite_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"gpusched.io/e2e/suite/cluster"
	"gpusched.io/e2e/suite/controlplane"
)

// TestAdmissionWebhookGatesGpuschedPods: the real apiserver calls gpusched's
// webhook (deploy/'s MutatingWebhookConfiguration, pointed at loopback) and
// gpusched's queued pods come back with the scheduling gate; gpusched's
// pods with no queue and no gang do not (nothing would lift it), nor do
// other schedulers' pods;
// with gpusched killed, creation still succeeds (failurePolicy Ignore)
// without the gate. gpusched made the Secret and wrote its CA into the
// caBundle, and a restart reuses both. Gated pods stay Pending until the
// admission loop lifts the gate, so nothing here waits for a binding.
func TestAdmissionWebhookGatesGpuschedPods(t *testing.T) {
	policy := queuePolicy(t, map[string]int{"team-a": 8}, nil)
	cp := controlplane.Start(t, controlplane.Options{Webhook: true, Policy: policy,
		Run: &controlplane.Components{Gpusched: true}})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	const ns = "e2e"
	if err := controlplane.EnsureNamespace(ctx, cp.Client, ns); err != nil {
		t.Fatal(err)
	}
	ca := waitForCaBundle(ctx, t, cp)
	checkServingCertificate(ctx, t, cp, ca)

	createGated(ctx, t, cp, ns, "train")
	other := cluster.NewPod(ns, "train-other-gate").SchedulerName(cluster.SchedulerName).
		Label(queueLabel, "team-a").SchedulingGate("example.com/other")
	if pod := createPod(ctx, t, cp, other); !slices.Equal(gateNames(pod), []string{"example.com/other", controlplane.WebhookGate}) {
		t.Errorf("pod with another gate: gates %v, want that gate and %s", gateNames(pod), controlplane.WebhookGate)
	}
	if pod := createPod(ctx, t, cp, cluster.NewPod(ns, "no-queue").SchedulerName(cluster.SchedulerName).Gpus(1)); len(pod.Spec.SchedulingGates) != 0 {
		t.Errorf("gpusched pod with no queue and no gang: gates %v, want none", gateNames(pod))
	}
	if pod := createPod(ctx, t, cp, cluster.NewPod(ns, "default-scheduler")); len(pod.Spec.SchedulingGates) != 0 {
		t.Errorf("default-scheduler pod: gates %v, want none", gateNames(pod))
	}
	// A queued pod made for the default scheduler (as Kueue's users make
	// them) would be bound past its quota: it is moved to gpusched and gated.
	if pod := createPod(ctx, t, cp, cluster.NewPod(ns, "queued-default-scheduler").Label(queueLabel, "team-a")); pod.Spec.SchedulerName != cluster.SchedulerName ||
		!slices.Equal(gateNames(pod), []string{controlplane.WebhookGate}) {
		t.Errorf("queued default-scheduler pod: scheduler %s, gates %v; want %s, [%s]",
			pod.Spec.SchedulerName, gateNames(pod), cluster.SchedulerName, controlplane.WebhookGate)
	}

	cp.KillGpusched()
	began := time.Now()
	pod := createPod(ctx, t, cp, cluster.NewPod(ns, "while-gpusched-is-down").SchedulerName(cluster.SchedulerName).
		Label(queueLabel, "team-a"))
	if len(pod.Spec.SchedulingGates) != 0 {
		t.Errorf("pod created while gpusched was down: gates %v, want none", gateNames(pod))
	}
	t.Logf("creation with gpusched down took %v", time.Since(began).Round(time.Millisecond))

	cp.StartGpusched()
	createGated(ctx, t, cp, ns, "after-restart")
	if again := waitForCaBundle(ctx, t, cp); again != ca {
		t.Errorf("after a restart the caBundle changed: gpusched made a new CA instead of reusing its Secret")
	}
}

const queueLabel = cluster.QueueLabel

func createPod(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, b *cluster.PodBuilder) *corev1.Pod {
	t.Helper()
	pod, err := b.Create(ctx, cp.Client)
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

func gateNames(pod *corev1.Pod) []string {
	var names []string
	for _, g := range pod.Spec.SchedulingGates {
		names = append(names, g.Name)
	}
	return names
}

// createGated creates gpusched pods named prefix-N until one comes back with
// exactly the gate. The first may come back without it: the apiserver
// learns the new caBundle (or a restarted gpusched's port) through its
// watch, and until then a failed call is ignored, by design.
func createGated(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, ns, prefix string) {
	t.Helper()
	var last []string
	for i := 0; ; i++ {
		b := cluster.NewPod(ns, fmt.Sprintf("%s-%d", prefix, i)).SchedulerName(cluster.SchedulerName).
			Label(queueLabel, "team-a").Gpus(1)
		pod := createPod(ctx, t, cp, b)
		last = gateNames(pod)
		if slices.Equal(last, []string{controlplane.WebhookGate}) {
			t.Logf("pod %s/%s came back gated (attempt %d)", ns, pod.Name, i+1)
			return
		}
		if len(last) != 0 || i == 100 {
			t.Fatalf("pod %s/%s: gates %v, want [%s]", ns, pod.Name, last, controlplane.WebhookGate)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no gpusched pod came back gated: %v", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitForCaBundle waits until gpusched has created its Secret and written
// the Secret's CA into the configuration's caBundle, and returns the CA.
func waitForCaBundle(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) string {
	t.Helper()
	var why string
	var ca string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		secret, err := cp.Client.CoreV1().Secrets(controlplane.DeployNamespace).Get(ctx, controlplane.WebhookSecretName, metav1.GetOptions{})
		if err != nil {
			why = err.Error()
			return false, nil
		}
		if secret.Type != corev1.SecretTypeTLS {
			return false, fmt.Errorf("Secret %s: type %s, want %s", secret.Name, secret.Type, corev1.SecretTypeTLS)
		}
		config, err := cp.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, controlplane.WebhookConfigName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ca = string(secret.Data["ca.crt"])
		for _, w := range config.Webhooks {
			if string(w.ClientConfig.CABundle) != ca {
				why = fmt.Sprintf("webhook %s: caBundle is not the Secret's ca.crt", w.Name)
				return false, nil
			}
		}
		return ca != "", nil
	})
	if err != nil {
		t.Fatalf("caBundle: %v (%s)", err, why)
	}
	return ca
}

// checkServingCertificate: the Secret's certificate chains to its CA and
// covers 127.0.0.1, the address the apiserver dials.
func checkServingCertificate(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, ca string) {
	t.Helper()
	secret, err := cp.Client.CoreV1().Secrets(controlplane.DeployNamespace).Get(ctx, controlplane.WebhookSecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(secret.Data["tls.crt"])
	if block == nil {
		t.Fatalf("Secret %s: tls.crt is not PEM", secret.Name)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(ca)) {
		t.Fatal("ca.crt is not a PEM certificate")
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: "127.0.0.1", Roots: roots}); err != nil {
		t.Errorf("serving certificate: %v", err)
	}
}
