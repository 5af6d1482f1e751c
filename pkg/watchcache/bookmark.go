package watchcache

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	"podline.dev/pkg/object"
	metav1 "podline.dev/proto/meta/v1"
)

// exemplar knows the resource's message type, so that the cache can build
// bookmark objects: a new, empty message of that type whose metadata holds
// only resourceVersion, as kube-apiserver's cacher builds them with its
// newFunc. Encoders add apiVersion and kind as they do for any object.
type exemplar struct {
	typ  protoreflect.MessageType
	meta protoreflect.FieldDescriptor
}

func (x *exemplar) set(obj object.Object) {
	m := obj.ProtoReflect()
	fd := m.Descriptor().Fields().ByName("metadata")
	if fd == nil || fd.Message() == nil || fd.Message().FullName() != (&metav1.ObjectMeta{}).ProtoReflect().Descriptor().FullName() {
		return
	}
	x.typ, x.meta = m.Type(), fd
}

func (x *exemplar) setIfEmpty(obj object.Object) {
	if x.typ == nil {
		x.set(obj)
	}
}

// bookmark returns the bookmark object at resourceVersion, or nil while
// the type is unknown.
func (x *exemplar) bookmark(resourceVersion string) object.Object {
	if x.typ == nil {
		return nil
	}
	m := x.typ.New()
	meta := &metav1.ObjectMeta{ResourceVersion: resourceVersion}
	m.Set(x.meta, protoreflect.ValueOfMessage(meta.ProtoReflect()))
	obj, _ := m.Interface().(object.Object)
	return obj
}

// resourceVersionTooLargeCause is the cause kube-apiserver attaches to a
// "Too large resource version" Timeout, which client-go's reflector looks
// for to retry its list or watch.
func resourceVersionTooLargeCause() *metav1.StatusCause {
	return &metav1.StatusCause{Reason: "ResourceVersionTooLarge", Message: "Too large resource version"}
}
