package storage

import (
	"bytes"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"podline.dev/pkg/object"
	metav1 "podline.dev/proto/meta/v1"
)

// magic starts every value, as in Kubernetes' protobuf storage.
var magic = []byte{'k', '8', 's', 0}

// Codec turns one kind's objects into etcd values and back.
type Codec struct {
	APIVersion string
	Kind       string
	// New returns an empty object of the kind.
	New func() object.Object
}

var marshalOpts = proto.MarshalOptions{Deterministic: true}

// Encode writes obj with its resourceVersion cleared: the version lives in etcd's mod revision.
func (c Codec) Encode(obj object.Object) ([]byte, error) {
	md := obj.GetMetadata()
	rv := md.GetResourceVersion()
	if md != nil {
		md.ResourceVersion = ""
	}
	raw, err := marshalOpts.Marshal(obj)
	if md != nil {
		md.ResourceVersion = rv
	}
	if err != nil {
		return nil, err
	}
	env, err := marshalOpts.Marshal(&metav1.Unknown{
		TypeMeta: &metav1.TypeMeta{ApiVersion: c.APIVersion, Kind: c.Kind},
		Raw:      raw,
	})
	if err != nil {
		return nil, err
	}
	return append(append(make([]byte, 0, len(magic)+len(env)), magic...), env...), nil
}

// Decode reads a value written by Encode and sets resourceVersion to rev.
func (c Codec) Decode(value []byte, rev int64) (object.Object, error) {
	if !bytes.HasPrefix(value, magic) {
		return nil, fmt.Errorf("storage: value has no k8s magic prefix")
	}
	var env metav1.Unknown
	if err := proto.Unmarshal(value[len(magic):], &env); err != nil {
		return nil, fmt.Errorf("storage: decode envelope: %w", err)
	}
	if tm := env.GetTypeMeta(); tm.GetKind() != c.Kind || tm.GetApiVersion() != c.APIVersion {
		return nil, fmt.Errorf("storage: value holds %s %s, want %s %s", tm.GetApiVersion(), tm.GetKind(), c.APIVersion, c.Kind)
	}
	obj := c.New()
	if err := proto.Unmarshal(env.Raw, obj); err != nil {
		return nil, fmt.Errorf("storage: decode %s: %w", c.Kind, err)
	}
	SetResourceVersion(obj, rev)
	SetTypeMeta(obj, c.APIVersion, c.Kind)
	return obj, nil
}

// SetResourceVersion stores rev in obj's metadata.
func SetResourceVersion(obj object.Object, rev int64) {
	md := obj.GetMetadata()
	if md == nil {
		md = &metav1.ObjectMeta{}
		setField(obj, "metadata", protoreflect.ValueOfMessage(md.ProtoReflect()))
	}
	md.ResourceVersion = strconv.FormatInt(rev, 10)
}

// SetTypeMeta fills apiVersion and kind, which every object carries.
func SetTypeMeta(obj object.Object, apiVersion, kind string) {
	setField(obj, "api_version", protoreflect.ValueOfString(apiVersion))
	setField(obj, "kind", protoreflect.ValueOfString(kind))
}

func setField(obj proto.Message, name protoreflect.Name, v protoreflect.Value) {
	m := obj.ProtoReflect()
	if fd := m.Descriptor().Fields().ByName(name); fd != nil {
		m.Set(fd, v)
	}
}

// ParseResourceVersion reads a resourceVersion; "" is 0.
func ParseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid resource version %q", rv)
	}
	return n, nil
}
