package grpcdyn

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
)

// Messages makes one resource's generated List and WatchEvent messages.
type Messages struct {
	list, event      protoreflect.MessageType
	apiVersion, kind string
}

// MessagesOf finds res's <Kind>List and <Kind>WatchEvent messages.
func MessagesOf(res apis.Resource) (Messages, error) {
	m := Messages{apiVersion: res.Group.GroupVersion(), kind: res.Kind}
	var err error
	if m.list, err = FindMessage(res.Message() + "List"); err != nil {
		return Messages{}, err
	}
	if m.event, err = FindMessage(res.Message() + "WatchEvent"); err != nil {
		return Messages{}, err
	}
	return m, nil
}

// List is a list of items with its metadata.
func (m Messages) List(items []object.Object, lm *metav1.ListMeta) proto.Message {
	l := m.list.New()
	fields := l.Descriptor().Fields()
	l.Set(fields.ByName("api_version"), protoreflect.ValueOfString(m.apiVersion))
	l.Set(fields.ByName("kind"), protoreflect.ValueOfString(m.kind+"List"))
	l.Set(fields.ByName("metadata"), protoreflect.ValueOfMessage(lm.ProtoReflect()))
	list := l.Mutable(fields.ByName("items")).List()
	for _, it := range items {
		list.Append(protoreflect.ValueOfMessage(it.ProtoReflect()))
	}
	return l.Interface()
}

// Event is a watch event on the wire.
func (m Messages) Event(ev watch.Event) proto.Message {
	e := m.event.New()
	fields := e.Descriptor().Fields()
	e.Set(fields.ByName("type"), protoreflect.ValueOfString(string(ev.Type)))
	if ev.Object != nil {
		obj := ev.Object
		if ev.Type == watch.Bookmark {
			// Bookmarks carry apiVersion and kind on the wire, as Kubernetes' do.
			obj = object.Copy(obj)
			o := obj.ProtoReflect()
			of := o.Descriptor().Fields()
			o.Set(of.ByName("api_version"), protoreflect.ValueOfString(m.apiVersion))
			o.Set(of.ByName("kind"), protoreflect.ValueOfString(m.kind))
		}
		e.Set(fields.ByName("object"), protoreflect.ValueOfMessage(obj.ProtoReflect()))
	}
	return e.Interface()
}
