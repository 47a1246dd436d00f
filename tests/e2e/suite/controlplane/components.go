package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"
)

// Names of the components, as used for log files and Pids().
const (
	Etcd          = "etcd"
	KubeAPIServer = "kube-apiserver"
	KubeScheduler = "kube-scheduler"
	Gpusched      = "gpusched"
)

func (c *ControlPlane) newProcess(name, path string, args []string) *process {
	return &process{name: name, path: path, args: args, logPath: filepath.Join(c.Dir, name+".log")}
}

func (c *ControlPlane) etcdProcess() *process {
	client := fmt.Sprintf("http://127.0.0.1:%d", c.ports.etcdClient)
	peer := fmt.Sprintf("http://127.0.0.1:%d", c.ports.etcdPeer)
	return c.newProcess(Etcd, c.Bins.Etcd, []string{
		"--name=e2e",
		"--data-dir=" + filepath.Join(c.Dir, "etcd-data"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=e2e=" + peer,
		// Test data need not survive a power cut; fsync would dominate
		// every write on a busy disk.
		"--unsafe-no-fsync",
		// One member and no peers: a short election timeout only makes
		// its first election (and so /health) come sooner (≈0.1 s, not
		// up to 1 s).
		"--heartbeat-interval=10",
		"--election-timeout=100",
		"--log-level=warn",
	})
}

func (c *ControlPlane) etcdURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d", c.ports.etcdClient)
}

func (c *ControlPlane) apiserverProcess(tokenFile string) *process {
	args := []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.ports.apiserver),
		"--etcd-servers=" + c.etcdURL(),
		"--tls-cert-file=" + c.pki.ServingCert,
		"--tls-private-key-file=" + c.pki.ServingKey,
		"--client-ca-file=" + c.pki.CAFile,
		"--token-auth-file=" + tokenFile,
		// RBAC only: the Node authorizer is for kubelets, and there are none.
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + c.pki.SAPublicKey,
		"--service-account-signing-key-file=" + c.pki.SASigningKey,
		// No controller-manager: nothing would create the default
		// ServiceAccount that the ServiceAccount plugin waits for, and no
		// node lifecycle controller would lift TaintNodesByCondition's
		// not-ready taint.
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		// The "kubernetes" Service's endpoints would be 127.0.0.1, which
		// Endpoints validation rejects (as the in-tree test server does).
		"--endpoint-reconciler-type=none",
		// On SIGTERM, answer new requests 429 (Retry-After: 1) until the
		// in-flight ones are done, then give open watches 2 s instead of
		// the request timeout (60 s): RestartAPIServer takes seconds.
		"--shutdown-send-retry-after=true",
		"--v=1",
	}
	if c.front != nil {
		args = append(args, c.front.apiserverArgs()...)
	}
	args = append(args, c.genericWorkloadArgs(KubeAPIServer)...)
	return c.newProcess(KubeAPIServer, c.Bins.KubeAPIServer, append(args, c.opts.APIServerArgs...))
}

func (c *ControlPlane) schedulerProcess(configFile string) *process {
	return c.newProcess(KubeScheduler, c.Bins.KubeScheduler, c.schedulerArgs(configFile, c.ports.scheduler))
}

func (c *ControlPlane) schedulerArgs(configFile string, port int) []string {
	args := []string{
		"--config=" + configFile,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		// No --authentication-kubeconfig: requests are anonymous, and these
		// paths are allowed without a SubjectAccessReview, so that the
		// test can scrape /metrics.
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
		"--v=2",
	}
	args = append(args, c.genericWorkloadArgs(KubeScheduler)...)
	return append(args, c.opts.SchedulerArgs...)
}

func (c *ControlPlane) gpuschedProcess(kubeconfig string) *process {
	return c.newProcess(Gpusched, c.Bins.Gpusched, c.gpuschedArgs(kubeconfig, c.ports.gpusched, c.ports.webhook))
}

func (c *ControlPlane) gpuschedArgs(kubeconfig string, port, webhookPort int, extra ...string) []string {
	args := []string{"serve",
		fmt.Sprintf("--listen=127.0.0.1:%d", port),
		"--kubeconfig=" + kubeconfig,
		"-v", "1",
		// As deploy/'s Deployment runs it.
		"--filter-keep-best=1",
	}
	if c.opts.Policy != "" {
		args = append(args, "--policy="+c.opts.Policy)
	}
	if c.opts.Webhook {
		args = append(args, c.webhookArgs(webhookPort)...)
	}
	if c.opts.Visibility {
		args = append(args, c.visibilityArgs()...)
	}
	args = append(args, extra...)
	return append(args, c.opts.GpuschedArgs...)
}

// httpClients builds a client that trusts the control plane's CA (for the
// apiserver) and one that skips verification (kube-scheduler's serving
// certificate is self-signed in memory).
func (c *ControlPlane) httpClients() error {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(c.pki.CAPEM)) {
		return fmt.Errorf("CA PEM not usable")
	}
	c.httpCA = &http.Client{Timeout: 5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	c.httpInsecure = &http.Client{Timeout: 5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	return nil
}

// get fetches url (with a bearer token if given) and returns the body of a
// 200 response, or an error naming the status and the start of the body.
func get(ctx context.Context, client *http.Client, url, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		text := strings.TrimSpace(string(body))
		if len(text) > 300 {
			text = text[:300] + "..."
		}
		return "", fmt.Errorf("GET %s: %s: %s", url, resp.Status, text)
	}
	return string(body), nil
}

// probe turns get into a readiness check.
func probe(client *http.Client, url, token string) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := get(ctx, client, url, token)
		return err
	}
}

func etcdProbe(client *http.Client, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		body, err := get(ctx, client, url+"/health", "")
		if err != nil {
			return err
		}
		if !strings.Contains(body, `"health":"true"`) {
			return fmt.Errorf("etcd /health: %s", body)
		}
		return nil
	}
}
