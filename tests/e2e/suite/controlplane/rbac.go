package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
)

// RenderDeploy returns the objects of deploy/ as `kubectl kustomize
// deploy/` renders them, which is what `kubectl apply -k deploy/` applies.
func RenderDeploy(repo, kubectl string) ([]*unstructured.Unstructured, error) {
	deploy := filepath.Join(repo, "deploy")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", deploy)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kubectl kustomize %s: %w\n%s", deploy, err, stderr.String())
	}
	return DecodeObjects(&stdout)
}

// DecodeObjects reads multi-document YAML (or JSON), expanding `kind: List`
// documents into their items.
func DecodeObjects(r io.Reader) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var objs []*unstructured.Unstructured
	for {
		var doc map[string]any
		if err := decoder.Decode(&doc); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}
		if doc == nil { // empty document
			continue
		}
		obj := &unstructured.Unstructured{Object: doc}
		if !obj.IsList() {
			objs = append(objs, obj)
			continue
		}
		err := obj.EachListItem(func(item runtime.Object) error {
			objs = append(objs, item.(*unstructured.Unstructured))
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("decode list: %w", err)
		}
	}
}

// rbacKinds are the deploy/ objects the control plane creates, in order.
// Workloads, ConfigMaps, Services and NetworkPolicies are not: the fixture
// runs the containers itself.
var rbacKinds = []string{"Namespace", "ServiceAccount", "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding"}

// applyDeployRBAC creates deploy/'s Namespace and RBAC objects, then binds
// GpuschedUser to the ClusterRole gpusched and, if deploy/ has one, the
// Role gpusched.
func applyDeployRBAC(ctx context.Context, client kubernetes.Interface, objs []*unstructured.Unstructured) error {
	haveClusterRole, haveRole := false, false
	for _, kind := range rbacKinds {
		for _, obj := range objs {
			if obj.GetKind() != kind {
				continue
			}
			if err := createObject(ctx, client, obj); err != nil {
				return fmt.Errorf("deploy %s %s/%s: %w", kind, obj.GetNamespace(), obj.GetName(), err)
			}
			switch {
			case kind == "ClusterRole" && obj.GetName() == "gpusched":
				haveClusterRole = true
			case kind == "Role" && obj.GetName() == "gpusched" && obj.GetNamespace() == DeployNamespace:
				haveRole = true
			}
		}
	}
	if !haveClusterRole {
		return errors.New("deploy/ has no ClusterRole gpusched: nothing to bind the extender to")
	}
	return bindGpusched(ctx, client, haveRole)
}

func bindGpusched(ctx context.Context, client kubernetes.Interface, withRole bool) error {
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: GpuschedUser}}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e:" + GpuschedUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "gpusched"},
		Subjects:   subjects,
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bind %s to ClusterRole gpusched: %w", GpuschedUser, err)
	}
	if !withRole {
		return nil
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e:" + GpuschedUser, Namespace: DeployNamespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "gpusched"},
		Subjects:   subjects,
	}
	if _, err := client.RbacV1().RoleBindings(DeployNamespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bind %s to Role gpusched: %w", GpuschedUser, err)
	}
	return nil
}

// createObject creates one deploy/ object through the typed client, first
// making sure its namespace exists (kube-system may not be there yet right
// after the apiserver turns ready).
func createObject(ctx context.Context, client kubernetes.Interface, obj *unstructured.Unstructured) error {
	if ns := obj.GetNamespace(); ns != "" {
		if err := EnsureNamespace(ctx, client, ns); err != nil {
			return err
		}
	}
	ns := obj.GetNamespace()
	opts := metav1.CreateOptions{}
	var err error
	switch obj.GetKind() {
	case "Namespace":
		err = createTyped(obj, &corev1.Namespace{}, func(o *corev1.Namespace) error {
			_, err := client.CoreV1().Namespaces().Create(ctx, o, opts)
			return ignoreExists(err)
		})
	case "ServiceAccount":
		err = createTyped(obj, &corev1.ServiceAccount{}, func(o *corev1.ServiceAccount) error {
			_, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, o, opts)
			return err
		})
	case "ClusterRole":
		err = createTyped(obj, &rbacv1.ClusterRole{}, func(o *rbacv1.ClusterRole) error {
			_, err := client.RbacV1().ClusterRoles().Create(ctx, o, opts)
			return err
		})
	case "Role":
		err = createTyped(obj, &rbacv1.Role{}, func(o *rbacv1.Role) error {
			_, err := client.RbacV1().Roles(ns).Create(ctx, o, opts)
			return err
		})
	case "ClusterRoleBinding":
		err = createTyped(obj, &rbacv1.ClusterRoleBinding{}, func(o *rbacv1.ClusterRoleBinding) error {
			_, err := client.RbacV1().ClusterRoleBindings().Create(ctx, o, opts)
			return err
		})
	case "RoleBinding":
		err = createTyped(obj, &rbacv1.RoleBinding{}, func(o *rbacv1.RoleBinding) error {
			_, err := client.RbacV1().RoleBindings(ns).Create(ctx, o, opts)
			return err
		})
	default:
		err = fmt.Errorf("kind %s not handled", obj.GetKind())
	}
	return err
}

func createTyped[T any](obj *unstructured.Unstructured, typed *T, create func(*T) error) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	return create(typed)
}

func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// EnsureNamespace creates namespace name unless it exists.
func EnsureNamespace(ctx context.Context, client kubernetes.Interface, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	return nil
}
