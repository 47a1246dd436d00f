package arena

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Kueue's objects as the arena reads them (the storage version).
var (
	WorkloadResource     = schema.GroupVersionResource{Group: KueueGroup, Version: "v1beta2", Resource: "workloads"}
	ClusterQueueResource = schema.GroupVersionResource{Group: KueueGroup, Version: "v1beta2", Resource: "clusterqueues"}
	LocalQueueResource   = schema.GroupVersionResource{Group: KueueGroup, Version: "v1beta2", Resource: "localqueues"}
)

// Condition is one entry of a Kueue object's status.conditions.
type Condition struct {
	Type, Status, Reason, Message string
}

// ConditionOf returns obj's condition of type kind (found false if none).
func ConditionOf(obj *unstructured.Unstructured, kind string) (Condition, bool) {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != kind {
			continue
		}
		text := func(key string) string { s, _ := m[key].(string); return s }
		return Condition{Type: kind, Status: text("status"), Reason: text("reason"), Message: text("message")}, true
	}
	return Condition{}, false
}

// WaitCondition waits until the Kueue object (resource, namespace, name)
// has a condition of type kind for which ok holds, and returns it.
func (k *Kueue) WaitCondition(ctx context.Context, resource schema.GroupVersionResource, namespace, name, kind string,
	ok func(Condition) bool, timeout time.Duration) (Condition, error) {
	var last Condition
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		obj, err := k.Dynamic.Resource(resource).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		} else if err != nil {
			return false, err
		}
		c, found := ConditionOf(obj, kind)
		last = c
		return found && ok(c), nil
	})
	if err != nil {
		return last, fmt.Errorf("%s %s/%s: condition %s: %w (last: %+v)", resource.Resource, namespace, name, kind, err, last)
	}
	return last, nil
}

// IsTrue and IsFalse are WaitCondition predicates.
func IsTrue(c Condition) bool  { return c.Status == "True" }
func IsFalse(c Condition) bool { return c.Status == "False" }
