package controlplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Names of deploy/'s visibility API objects (70-visibility.yaml).
const (
	VisibilityAPIService = "v1alpha1.visibility.gpusched.io"
	VisibilityService    = "gpusched-visibility"
	VisibilitySecretName = "gpusched-visibility-tls"
	VisibilityViewerRole = "gpusched-visibility-viewer"
)

var apiServiceResource = schema.GroupVersionResource{
	Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// visibilityArgs serve the visibility API on loopback. The certificate
// keeps its default names (<service>.<namespace>.svc): the aggregator
// checks that name whatever address it dials.
func (c *ControlPlane) visibilityArgs() []string {
	return []string{fmt.Sprintf("--visibility-listen=127.0.0.1:%d", c.ports.visibility)}
}

// registerVisibility lets gpusched read the front proxy's settings (deploy/
// binds its ServiceAccount, the fixture's gpusched is a user), and creates
// the Service as an ExternalName to localhost (no cluster network) and
// deploy/'s APIService with the Service's port set to gpusched's.
func (c *ControlPlane) registerVisibility(ctx context.Context) error {
	if !c.opts.Visibility {
		return nil
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e:" + GpuschedUser + ":auth-reader", Namespace: "kube-system"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role",
			Name: "extension-apiserver-authentication-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: GpuschedUser}},
	}
	if _, err := c.Client.RbacV1().RoleBindings("kube-system").Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bind %s to extension-apiserver-authentication-reader: %w", GpuschedUser, err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: VisibilityService, Namespace: DeployNamespace},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
	}
	if _, err := c.Client.CoreV1().Services(DeployNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("visibility Service: %w", err)
	}
	return c.createAPIService(ctx)
}

func (c *ControlPlane) createAPIService(ctx context.Context) error {
	objs, err := RenderDeploy(c.Repo, c.Bins.Kubectl)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if obj.GetKind() != "APIService" || obj.GetName() != VisibilityAPIService {
			continue
		}
		if err := unstructured.SetNestedField(obj.Object, int64(c.ports.visibility), "spec", "service", "port"); err != nil {
			return err
		}
		client, err := dynamic.NewForConfig(c.RestConfig)
		if err != nil {
			return err
		}
		_, err = client.Resource(apiServiceResource).Create(ctx, obj, metav1.CreateOptions{})
		return err
	}
	return fmt.Errorf("deploy/ has no APIService %s", VisibilityAPIService)
}

// VisibilityURL is gpusched's visibility listener, for calls that bypass
// kube-apiserver ("" without Options.Visibility).
func (c *ControlPlane) VisibilityURL() string {
	if !c.opts.Visibility {
		return ""
	}
	return fmt.Sprintf("https://127.0.0.1:%d", c.ports.visibility)
}

// FrontProxyClient calls gpusched's visibility listener as kube-apiserver's
// front proxy does: with the front-proxy client certificate (the caller
// sets X-Remote-User and X-Remote-Group). It skips verifying gpusched's
// serving certificate, which is for the Service's name, not 127.0.0.1.
// With cert false it presents no certificate.
func (c *ControlPlane) FrontProxyClient(cert bool) (*http.Client, error) {
	config := &tls.Config{InsecureSkipVerify: true}
	if cert {
		pair, err := tls.LoadX509KeyPair(c.front.ClientCert, c.front.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("front proxy certificate: %w", err)
		}
		config.Certificates = []tls.Certificate{pair}
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: config}}, nil
}
