package registry

import (
	"context"
	"fmt"
	"maps"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// ActionFunc serves a subresource written with a body of its own kind.
type ActionFunc func(ctx context.Context, namespace, name string, body object.Object, dryRun bool) (proto.Message, error)

// Action returns the subresource behind a gRPC method name (pods: Bind).
func (r *Registry) Action(method string) (ActionFunc, bool) {
	if r.Resource.Kind == "Pod" && method == "Bind" {
		return r.bind, true
	}
	return nil, false
}

// bind assigns a pod to a node (pods/binding), as the scheduler does: it
// sets spec.nodeName once, adds PodScheduled=True, and merges the binding's
// annotations into the pod's.
func (r *Registry) bind(ctx context.Context, namespace, name string, body object.Object, dryRun bool) (proto.Message, error) {
	b := body.(*corev1.Binding)
	if b.GetMetadata().GetName() != "" && b.GetMetadata().GetName() != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("name in binding (%s) does not match the pod (%s)", b.GetMetadata().GetName(), name))
	}
	node := b.GetTarget().GetName()
	if node == "" || (b.GetTarget().GetKind() != "" && b.GetTarget().GetKind() != "Node") {
		return nil, apierrors.NewInvalid(apierrors.GroupKind{Kind: "Binding"}, name, nil)
	}
	fn := func(cur object.Object) (object.Object, bool, error) {
		pod := object.Copy(cur.(*corev1.Pod))
		if uid := b.GetMetadata().GetUid(); uid != "" && uid != pod.GetMetadata().GetUid() {
			return nil, false, apierrors.NewConflict(r.gr(), name, "the UID in the binding does not match the pod")
		}
		if pod.GetMetadata().GetDeletionTimestamp() != nil {
			return nil, false, apierrors.NewConflict(r.gr(), name, "pod is being deleted, cannot be assigned to a host")
		}
		if n := pod.GetSpec().GetNodeName(); n != "" {
			return nil, false, apierrors.NewConflict(r.gr(), name, fmt.Sprintf("pod %s is already assigned to node %q", name, n))
		}
		if pod.Spec == nil {
			pod.Spec = &corev1.PodSpec{}
		}
		pod.Spec.NodeName = node
		if ann := b.GetMetadata().GetAnnotations(); len(ann) > 0 {
			if pod.Metadata.Annotations == nil {
				pod.Metadata.Annotations = map[string]string{}
			}
			maps.Copy(pod.Metadata.Annotations, ann)
		}
		if pod.Status == nil {
			pod.Status = &corev1.PodStatus{}
		}
		setPodCondition(pod.Status, &corev1.PodCondition{Type: "PodScheduled", Status: "True",
			LastTransitionTime: &metav1.Time{Seconds: r.now().Unix()}})
		if dryRun {
			return nil, false, errDryRun
		}
		return pod, false, nil
	}
	_, err := r.store.GuaranteedUpdate(ctx, r.Key(namespace, name), r.codec, fn)
	if err != nil && err != errDryRun {
		return nil, r.toAPI(err, name)
	}
	return &metav1.Status{ApiVersion: "v1", Kind: "Status", Metadata: &metav1.ListMeta{}, Status: "Success", Code: 201}, nil
}

// setPodCondition replaces the condition of the same type or appends it.
func setPodCondition(status *corev1.PodStatus, c *corev1.PodCondition) {
	for i, old := range status.Conditions {
		if old.GetType() == c.GetType() {
			if old.GetStatus() == c.GetStatus() {
				c.LastTransitionTime = old.LastTransitionTime
			}
			status.Conditions[i] = c
			return
		}
	}
	status.Conditions = append(status.Conditions, c)
}
