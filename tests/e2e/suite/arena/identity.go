package arena

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// tokenLifetime outlasts any test; the API server signs it with the
// control plane's service account key.
const tokenLifetime = 6 * 3600

// writeManagerKubeconfig writes a kubeconfig for the manager's
// ServiceAccount (a TokenRequest token), so that Kueue runs with exactly
// the RBAC its release installs, as in its pod: a verb missing from it
// fails the arena instead of passing unseen under admin rights.
func writeManagerKubeconfig(ctx context.Context, client kubernetes.Interface, path, server, caPEM, namespace, account string) error {
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr(int64(tokenLifetime))}}
	token, err := client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, account, request, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("token for %s/%s: %w", namespace, account, err)
	}
	config := clientcmdapi.NewConfig()
	config.Clusters["e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: []byte(caPEM)}
	config.AuthInfos[account] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	config.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: account, Namespace: namespace}
	config.CurrentContext = "e2e"
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		return fmt.Errorf("kueue kubeconfig: %w", err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
