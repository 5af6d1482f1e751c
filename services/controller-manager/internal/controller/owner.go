package controller

import (
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/labels"
	"podline.dev/pkg/object"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
)

// GetControllerOf is the ownerReference of obj with controller: true, or nil.
func GetControllerOf(obj object.Object) *metav1.OwnerReference {
	for _, ref := range obj.GetMetadata().GetOwnerReferences() {
		if ref.GetController() {
			return ref
		}
	}
	return nil
}

// NewControllerRef is the ownerReference a controller puts on what it
// creates: controller and blockOwnerDeletion true, as Kubernetes does.
func NewControllerRef(owner object.Object, res apis.Resource) *metav1.OwnerReference {
	md := owner.GetMetadata()
	return &metav1.OwnerReference{
		ApiVersion:         res.Group.GroupVersion(),
		Kind:               res.Kind,
		Name:               md.GetName(),
		Uid:                md.GetUid(),
		Controller:         proto.Bool(true),
		BlockOwnerDeletion: proto.Bool(true),
	}
}

// IsControlledBy reports whether obj's controller is owner (by UID).
func IsControlledBy(obj, owner object.Object) bool {
	ref := GetControllerOf(obj)
	return ref != nil && ref.GetUid() == owner.GetMetadata().GetUid()
}

// ResolveControllerRef is the object of T's kind that ref names in
// namespace, if it is the one in the lister's cache (same UID; a
// namesake made after the owner was deleted is not it), else nil.
func ResolveControllerRef[T object.Object](lister cache.Lister[T], namespace string, ref *metav1.OwnerReference) T {
	var none T
	if ref == nil || ref.GetKind() != ResourceOf[T]().Kind {
		return none
	}
	owner, err := lister.Get(namespace, ref.GetName())
	if err != nil || owner.GetMetadata().GetUid() != ref.GetUid() {
		return none
	}
	return owner
}

// SelectingOwners lists the objects of the lister in obj's namespace whose
// label selector (selectorOf; an empty or invalid one selects nothing)
// matches obj's labels: the controllers that may adopt obj, an orphan.
func SelectingOwners[T object.Object](lister cache.Lister[T], selectorOf func(T) *metav1.LabelSelector, obj object.Object) []T {
	owners, err := lister.Namespace(obj.GetMetadata().GetNamespace()).List(nil)
	if err != nil {
		return nil
	}
	var out []T
	for _, o := range owners {
		sel, err := labels.FromLabelSelector(selectorOf(o))
		if err != nil || sel.Empty() {
			continue
		}
		if sel.Matches(obj.GetMetadata().GetLabels()) {
			out = append(out, o)
		}
	}
	return out
}
