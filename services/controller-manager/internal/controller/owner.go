package controller

import (
	"google.golang.org/protobuf/proto"

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
