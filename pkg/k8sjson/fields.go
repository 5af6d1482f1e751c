package k8sjson

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// wellKnown names the messages whose JSON form is not an object.
type wellKnown uint8

const (
	wkNone        wellKnown = iota
	wkTime                  // {seconds} ↔ "2006-01-02T15:04:05Z"
	wkMicroTime             // {seconds, nanos} ↔ "2006-01-02T15:04:05.000000Z"
	wkDuration              // {nanos} ↔ "1m30s"
	wkIntOrString           // {type, int_val, str_val} ↔ 1 or "25%"
)

var wellKnownTypes = map[protoreflect.FullName]wellKnown{
	"podline.meta.v1.Time":        wkTime,
	"podline.meta.v1.MicroTime":   wkMicroTime,
	"podline.meta.v1.Duration":    wkDuration,
	"podline.meta.v1.IntOrString": wkIntOrString,
}

// rawJSONFields are string fields holding JSON text that Kubernetes writes
// as the JSON value itself (metav1.FieldsV1).
var rawJSONFields = map[protoreflect.FullName]bool{
	"podline.meta.v1.ManagedFieldsEntry.fields_v1": true,
}

// quantityFields are string fields (or maps of them) holding a
// resource.Quantity, whose JSON may also be a number ("cpu": 1).
var quantityFields = map[protoreflect.FullName]bool{
	"podline.core.v1.ResourceRequirements.limits":     true,
	"podline.core.v1.ResourceRequirements.requests":   true,
	"podline.core.v1.PodSpec.overhead":                true,
	"podline.core.v1.NodeStatus.capacity":             true,
	"podline.core.v1.NodeStatus.allocatable":          true,
	"podline.core.v1.ResourceFieldSelector.divisor":   true,
	"podline.core.v1.EmptyDirVolumeSource.size_limit": true,
}

// messageInfo is the cached field table of one message type.
type messageInfo struct {
	desc   protoreflect.MessageDescriptor
	name   string // the message's name, as Kubernetes' Go struct is named
	goType string // as Kubernetes' Go type prints: v1.PodSpec, intstr.IntOrString
	wk     wellKnown
	// fields in field-number order (for podline's protos, declaration order).
	fields []fieldInfo
	// hasAlwaysEmit: some field is written even when empty.
	hasAlwaysEmit bool
	byName        map[string]*fieldInfo
	byNumber      []*fieldInfo                            // dense, by field number, when numbers are small
	byNumberMap   map[protoreflect.FieldNumber]*fieldInfo // otherwise
	position      []int                                   // position in fields, by declaration index
	// The parts of a well-known type, by position: seconds/nanos (Time,
	// MicroTime), nanos (Duration), type/int_val/str_val (IntOrString).
	wkFields [3]protoreflect.FieldDescriptor
}

// fieldInfo is one field of a messageInfo.
type fieldInfo struct {
	fd    protoreflect.FieldDescriptor
	index int
	name  string // JSON name
	key   []byte // `"name":`
	list  bool
	isMap bool
	// nullable fields are cleared by a JSON null; on plain proto3 scalars a
	// null has no effect, as in encoding/json.
	nullable bool
	// alwaysEmit: written even when empty (the items of a List).
	alwaysEmit bool
	// value describes the field's value, a list's element or a map's value.
	value valueInfo
	// mapKey is the kind of a map's key.
	mapKey protoreflect.Kind
}

// valueInfo describes one JSON value: a singular field, a list element or a
// map value.
type valueInfo struct {
	kind     protoreflect.Kind
	raw      bool // JSON text kept in a string
	quantity bool // a string that may arrive as a number
	enum     protoreflect.EnumDescriptor
	msgDesc  protoreflect.MessageDescriptor
	msg      atomic.Pointer[messageInfo] // resolved on first use
}

func (v *valueInfo) message() *messageInfo {
	if mi := v.msg.Load(); mi != nil {
		return mi
	}
	mi := infoOf(v.msgDesc)
	v.msg.Store(mi)
	return mi
}

var infos sync.Map // protoreflect.MessageDescriptor → *messageInfo

// infoOf returns the cached field table of md, building it on first use.
func infoOf(md protoreflect.MessageDescriptor) *messageInfo {
	if mi, ok := infos.Load(md); ok {
		return mi.(*messageInfo)
	}
	mi, _ := infos.LoadOrStore(md, newMessageInfo(md))
	return mi.(*messageInfo)
}

func newMessageInfo(md protoreflect.MessageDescriptor) *messageInfo {
	mi := &messageInfo{desc: md, name: string(md.Name()), wk: wellKnownTypes[md.FullName()]}
	mi.goType = messageGoType(md, mi.wk)
	fds := md.Fields()
	order := make([]protoreflect.FieldDescriptor, fds.Len())
	maxNumber := protoreflect.FieldNumber(0)
	for i := range fds.Len() {
		order[i] = fds.Get(i)
		maxNumber = max(maxNumber, order[i].Number())
	}
	slices.SortStableFunc(order, func(a, b protoreflect.FieldDescriptor) int { return cmp.Compare(a.Number(), b.Number()) })
	mi.fields = make([]fieldInfo, len(order))
	mi.byName = make(map[string]*fieldInfo, len(order))
	mi.position = make([]int, len(order))
	if maxNumber <= 256 {
		mi.byNumber = make([]*fieldInfo, maxNumber+1)
	} else {
		mi.byNumberMap = make(map[protoreflect.FieldNumber]*fieldInfo, len(order))
	}
	isList := strings.HasSuffix(string(md.Name()), "List")
	for i, fd := range order {
		f := &mi.fields[i]
		mi.position[fd.Index()] = i
		if mi.byNumber != nil {
			mi.byNumber[fd.Number()] = f
		} else {
			mi.byNumberMap[fd.Number()] = f
		}
		f.fd = fd
		f.index = i
		f.name = fd.JSONName()
		f.key = appendString(nil, f.name)
		f.key = append(f.key, ':')
		f.list = fd.IsList()
		f.isMap = fd.IsMap()
		f.nullable = fd.HasPresence() || f.list || f.isMap
		f.alwaysEmit = isList && f.list && fd.Name() == "items"
		mi.hasAlwaysEmit = mi.hasAlwaysEmit || f.alwaysEmit
		vd := fd
		if f.isMap {
			f.mapKey = fd.MapKey().Kind()
			vd = fd.MapValue()
		}
		f.value.kind = vd.Kind()
		f.value.enum = vd.Enum()
		f.value.msgDesc = vd.Message()
		f.value.raw = rawJSONFields[fd.FullName()] && vd.Kind() == protoreflect.StringKind
		f.value.quantity = quantityFields[fd.FullName()] && vd.Kind() == protoreflect.StringKind
		mi.byName[f.name] = f
	}
	if mi.wk != wkNone {
		var ok bool
		if mi.wkFields, ok = wellKnownFields(mi.wk, fds); !ok {
			mi.wk = wkNone // not the shape we know: a plain message
		}
	}
	return mi
}

// field returns the field with number n, or nil.
func (mi *messageInfo) field(n protoreflect.FieldNumber) *fieldInfo {
	if mi.byNumber != nil {
		if int(n) < len(mi.byNumber) {
			return mi.byNumber[n]
		}
		return nil
	}
	return mi.byNumberMap[n]
}

// messageGoType names a message as Kubernetes' Go type prints in
// encoding/json's errors: the last element of the proto package, a dot and
// the name (v1.PodSpec).
func messageGoType(md protoreflect.MessageDescriptor, wk wellKnown) string {
	if wk == wkIntOrString {
		return "intstr.IntOrString"
	}
	pkg := string(md.ParentFile().Package())
	if i := strings.LastIndexByte(pkg, '.'); i >= 0 {
		pkg = pkg[i+1:]
	}
	if pkg == "" {
		return string(md.Name())
	}
	return pkg + "." + string(md.Name())
}

// goType names the Go type of one value for error messages.
func (v *valueInfo) goType() string {
	switch v.kind {
	case protoreflect.BoolKind:
		return "bool"
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return "int32"
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return "int64"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return "uint32"
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return "uint64"
	case protoreflect.FloatKind:
		return "float32"
	case protoreflect.DoubleKind:
		return "float64"
	case protoreflect.StringKind:
		if v.quantity {
			return "resource.Quantity"
		}
		if v.raw {
			return "v1.FieldsV1"
		}
		return "string"
	case protoreflect.BytesKind:
		return "[]uint8"
	case protoreflect.EnumKind:
		return string(v.enum.Name())
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return v.message().goType
	}
	return v.kind.String()
}

// goType names the Go type of the whole field: []v1.Container, map[string]string.
func (f *fieldInfo) goType() string {
	switch {
	case f.list:
		return "[]" + f.value.goType()
	case f.isMap:
		k := valueInfo{kind: f.mapKey}
		return "map[" + k.goType() + "]" + f.value.goType()
	}
	return f.value.goType()
}
