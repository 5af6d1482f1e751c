package registry

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Every kind is a message with fields api_version, kind, metadata and, for
// most, spec and status; these helpers reach them without per-kind code.

func fieldOf(obj proto.Message, name protoreflect.Name) protoreflect.FieldDescriptor {
	return obj.ProtoReflect().Descriptor().Fields().ByName(name)
}

func hasField(obj proto.Message, name protoreflect.Name) bool { return fieldOf(obj, name) != nil }

// sameField reports whether a and b agree on the named message field.
func sameField(a, b proto.Message, name protoreflect.Name) bool {
	fd := fieldOf(a, name)
	if fd == nil {
		return true
	}
	am, bm := a.ProtoReflect(), b.ProtoReflect()
	if am.Has(fd) != bm.Has(fd) {
		// An unset message and an empty one are the same state.
		if fd.Kind() == protoreflect.MessageKind {
			return proto.Equal(am.Get(fd).Message().Interface(), bm.Get(fd).Message().Interface())
		}
		return false
	}
	if !am.Has(fd) {
		return true
	}
	if fd.Kind() == protoreflect.MessageKind && !fd.IsList() && !fd.IsMap() {
		return proto.Equal(am.Get(fd).Message().Interface(), bm.Get(fd).Message().Interface())
	}
	return am.Get(fd).Equal(bm.Get(fd))
}

// copyField sets dst's named field to src's (clearing it when src has none).
func copyField(dst, src proto.Message, name protoreflect.Name) {
	fd := fieldOf(dst, name)
	if fd == nil {
		return
	}
	dm, sm := dst.ProtoReflect(), src.ProtoReflect()
	if !sm.Has(fd) {
		dm.Clear(fd)
		return
	}
	dm.Set(fd, sm.Get(fd))
}

// clearField unsets the named field.
func clearField(obj proto.Message, name protoreflect.Name) {
	if fd := fieldOf(obj, name); fd != nil {
		obj.ProtoReflect().Clear(fd)
	}
}
