package controlplane

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The identities of a control plane, all authenticated by static tokens.
const (
	// AdminUser is the test's own identity (group system:masters).
	AdminUser = "e2e-admin"
	// SchedulerUser is kube-scheduler: the ServiceAccount deploy/ ships, so
	// that deploy/'s RBAC applies to it unchanged.
	SchedulerUser = "system:serviceaccount:" + DeployNamespace + ":" + deployServiceAccount
	// GpuschedUser is the extender: bound to deploy/'s ClusterRole gpusched
	// (and Role gpusched, if any) and nothing else, so that a verb missing
	// from its role fails the tests.
	GpuschedUser = "gpusched-e2e-extender"
	// ViewerUser is a person with no rights but what a test binds to it
	// (ViewerToken logs in as them, e.g. from an exec credential plugin).
	ViewerUser = "e2e-viewer"
)

// DeployNamespace is where deploy/ puts gpusched.
const DeployNamespace = "gpusched-system"

const deployServiceAccount = "gpusched"

type identity struct {
	user   string
	groups []string
	token  string
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func newIdentities() (admin, scheduler, gpusched, controllerManager, viewer identity, err error) {
	admin = identity{user: AdminUser, groups: []string{"system:masters"}}
	scheduler = identity{user: SchedulerUser, groups: []string{
		"system:serviceaccounts", "system:serviceaccounts:" + DeployNamespace, "system:authenticated"}}
	gpusched = identity{user: GpuschedUser}
	controllerManager = identity{user: ControllerManagerUser}
	viewer = identity{user: ViewerUser, groups: []string{"system:authenticated"}}
	for _, id := range []*identity{&admin, &scheduler, &gpusched, &controllerManager, &viewer} {
		if id.token, err = randomToken(); err != nil {
			return
		}
	}
	return
}

// writeTokenFile writes kube-apiserver's --token-auth-file:
// token,user,uid,"group1,group2".
func writeTokenFile(path string, ids ...identity) error {
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%s,%s,%s", id.token, id.user, "uid-"+id.user)
		if len(id.groups) > 0 {
			fmt.Fprintf(&b, ",%q", strings.Join(id.groups, ","))
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	return nil
}

// writeKubeconfig writes a kubeconfig for id against server, trusting caPEM
// (inline, so the file stands alone).
func writeKubeconfig(path, server, caPEM string, id identity) error {
	config := clientcmdapi.NewConfig()
	config.Clusters["e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: []byte(caPEM)}
	config.AuthInfos[id.user] = &clientcmdapi.AuthInfo{Token: id.token}
	config.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: id.user}
	config.CurrentContext = "e2e"
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return nil
}

// restConfig is a client-go configuration for id.
func restConfig(server, caPEM string, id identity) *rest.Config {
	return &rest.Config{
		Host:            server,
		BearerToken:     id.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: []byte(caPEM)},
		// The defaults (5 qps, burst 10) would throttle tests that create
		// hundreds of pods; the apiserver's own limits still apply.
		QPS:   500,
		Burst: 1000,
	}
}
