package arena

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"

	"gpusched.io/e2e/suite/controlplane"
)

// fieldManager owns what the arena applies (server-side apply).
const fieldManager = "gpusched-e2e-arena"

// KueueGroup is the API group of Kueue's objects.
const KueueGroup = "kueue.x-k8s.io"

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// applier applies unstructured objects of any kind the API server serves,
// as `kubectl apply --server-side` would.
type applier struct {
	client  kubernetes.Interface
	dynamic dynamic.Interface
	mapper  *restmapper.DeferredDiscoveryRESTMapper
}

func newApplier(client kubernetes.Interface, dyn dynamic.Interface) *applier {
	cached := memory.NewMemCacheClient(client.Discovery())
	return &applier{client: client, dynamic: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(cached)}
}

// apply applies each object in order; after CRDs it waits until they are
// Established and forgets the discovery it cached.
func (a *applier) apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	var crds []string
	for i, obj := range objs {
		if obj.GetKind() != "CustomResourceDefinition" && len(crds) > 0 {
			if err := a.waitEstablished(ctx, crds); err != nil {
				return err
			}
			crds = nil
		}
		if err := a.applyOne(ctx, obj); err != nil {
			return err
		}
		if obj.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, obj.GetName())
		}
		if i == len(objs)-1 && len(crds) > 0 {
			return a.waitEstablished(ctx, crds)
		}
	}
	return nil
}

func (a *applier) applyOne(ctx context.Context, obj *unstructured.Unstructured) error {
	what := fmt.Sprintf("%s %s", obj.GetKind(), objectName(obj))
	gvk := obj.GroupVersionKind()
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("apply %s: %w", what, err)
	}
	var resource dynamic.ResourceInterface = a.dynamic.Resource(mapping.Resource)
	if ns := obj.GetNamespace(); ns != "" {
		// kube-system may not be there yet right after /readyz.
		if err := controlplane.EnsureNamespace(ctx, a.client, ns); err != nil {
			return err
		}
		resource = a.dynamic.Resource(mapping.Resource).Namespace(ns)
	}
	_, err = resource.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("apply %s: %w", what, err)
	}
	return nil
}

// waitEstablished waits until each CRD is Established, then resets the
// mapper so that their kinds resolve.
func (a *applier) waitEstablished(ctx context.Context, names []string) error {
	for _, name := range names {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			crd, err := a.dynamic.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			} else if err != nil {
				return false, err
			}
			return conditionTrue(crd, "Established"), nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not Established: %w", name, err)
		}
	}
	a.mapper.Reset()
	return nil
}

// conditionTrue reports whether obj has condition kind with status True.
func conditionTrue(obj *unstructured.Unstructured, kind string) bool {
	c, found := ConditionOf(obj, kind)
	return found && IsTrue(c)
}

func objectName(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

// ApplyKueueObjects applies Kueue objects (ResourceFlavors, Cohorts,
// ClusterQueues, LocalQueues, any version Kueue serves: v1beta1 ones go
// through its conversion webhook) from multi-document YAML, creating the
// namespaces of LocalQueues. An object of another API group is an error:
// a policy meant for gpusched as well must be split by the caller.
func (k *Kueue) ApplyKueueObjects(ctx context.Context, text string) error {
	objs, err := controlplane.DecodeObjects(strings.NewReader(text))
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if group := obj.GroupVersionKind().Group; group != KueueGroup {
			return fmt.Errorf("kueue objects: %s %s is in group %q, not %s", obj.GetKind(), objectName(obj), group, KueueGroup)
		}
	}
	return k.applier.apply(ctx, objs)
}
