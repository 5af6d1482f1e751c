package openapi

import (
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"podline.dev/proto/all"
	"podline.dev/proto/apis"
)

// Schema is an OpenAPI schema object with Kubernetes' extensions.
type Schema struct {
	Ref                  string             `json:"$ref,omitempty"`
	Description          string             `json:"description,omitempty"`
	Type                 string             `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	OneOf                []*Schema          `json:"oneOf,omitempty"`
	AllOf                []*Schema          `json:"allOf,omitempty"`

	GroupVersionKind []GVK    `json:"x-kubernetes-group-version-kind,omitempty"`
	PatchMergeKey    string   `json:"x-kubernetes-patch-merge-key,omitempty"`
	PatchStrategy    string   `json:"x-kubernetes-patch-strategy,omitempty"`
	ListType         string   `json:"x-kubernetes-list-type,omitempty"`
	ListMapKeys      []string `json:"x-kubernetes-list-map-keys,omitempty"`
}

// GVK is an x-kubernetes-group-version-kind entry.
type GVK struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// builder collects the definitions a document needs, naming them as
// Kubernetes does and referring to them under refPrefix
// ("#/components/schemas/" in v3, "#/definitions/" in v2).
type builder struct {
	refPrefix string
	// v2 writes Swagger 2.0, which has no oneOf: a value of two types is
	// a string with a format there.
	v2   bool
	defs map[string]*Schema
}

func newBuilder(refPrefix string, v2 bool) *builder {
	return &builder{refPrefix: refPrefix, v2: v2, defs: map[string]*Schema{}}
}

// eitherType is a value JSON may write as either of two types (v3), or
// as a string with a format (v2).
func (b *builder) eitherType(def Schema, t1, t2 string) Schema {
	if b.v2 {
		def.Type = "string"
	} else {
		def.OneOf = []*Schema{{Type: t1}, {Type: t2}}
	}
	return def
}

// scalarDefinitions are the messages whose JSON is a scalar (pkg/k8sjson),
// by Kubernetes' definition name.
var scalarDefinitions = map[protoreflect.FullName]struct {
	name   string
	schema Schema
}{
	"podline.meta.v1.Time": {"io.k8s.apimachinery.pkg.apis.meta.v1.Time",
		Schema{Type: "string", Format: "date-time", Description: "Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON."}},
	"podline.meta.v1.MicroTime": {"io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
		Schema{Type: "string", Format: "date-time", Description: "MicroTime is version of Time with microsecond level precision."}},
	"podline.meta.v1.Duration": {"io.k8s.apimachinery.pkg.apis.meta.v1.Duration",
		Schema{Type: "string", Description: "Duration is a wrapper around time.Duration which supports correct marshaling to YAML and JSON."}},
}

// intOrStringDef is IntOrString's definition name; its schema depends on
// the OpenAPI version (eitherType).
const intOrStringDef = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"

// subresourceKinds are kinds that are no resource of their own, only the
// body of subresources.
var subresourceKinds = map[protoreflect.FullName]GVK{
	"podline.autoscaling.v1.Scale": {Group: "autoscaling", Version: "v1", Kind: "Scale"},
}

// Definition names of the string forms a descriptor cannot name.
const (
	quantityDef = "io.k8s.apimachinery.pkg.api.resource.Quantity"
	fieldsV1Def = "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1"
)

// definitionName is Kubernetes' name for a message: podline.core.v1.Pod
// is io.k8s.api.core.v1.Pod, podline.meta.v1.ObjectMeta is
// io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta.
func definitionName(md protoreflect.MessageDescriptor) string {
	if s, ok := scalarDefinitions[md.FullName()]; ok {
		return s.name
	}
	if md.FullName() == "podline.meta.v1.IntOrString" {
		return intOrStringDef
	}
	pkg := strings.TrimPrefix(string(md.ParentFile().Package()), "podline.")
	if pkg == "meta.v1" {
		return "io.k8s.apimachinery.pkg.apis.meta.v1." + string(md.Name())
	}
	return "io.k8s.api." + pkg + "." + string(md.Name())
}

// ref adds the message's definition (and everything it refers to) and
// returns a schema referring to it.
func (b *builder) ref(md protoreflect.MessageDescriptor) *Schema {
	name := definitionName(md)
	if _, done := b.defs[name]; !done {
		if s, ok := scalarDefinitions[md.FullName()]; ok {
			def := s.schema
			b.defs[name] = &def
		} else if name == intOrStringDef {
			def := b.eitherType(Schema{Format: "int-or-string", Description: "IntOrString is a type that can hold an int32 or a string."}, "integer", "string")
			b.defs[name] = &def
		} else {
			b.defs[name] = &Schema{} // placeholder: messages may refer to themselves
			b.defs[name] = b.object(md)
		}
	}
	return b.refTo(name)
}

func (b *builder) refTo(name string) *Schema { return &Schema{Ref: b.refPrefix + name} }

// named adds a definition written by hand (Quantity, FieldsV1, Patch)
// and refers to it.
func (b *builder) named(name string, def Schema) *Schema {
	if _, done := b.defs[name]; !done {
		b.defs[name] = &def
	}
	return b.refTo(name)
}

// object is the schema of a message: one property per field, by JSON name.
func (b *builder) object(md protoreflect.MessageDescriptor) *Schema {
	s := &Schema{Type: "object", Properties: map[string]*Schema{}, Description: all.Descriptions[string(md.FullName())]}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		p := b.field(fd)
		if d := all.Descriptions[string(fd.FullName())]; d != "" {
			p = describe(p, d)
		}
		if ext, ok := listExtensions[fd.FullName()]; ok {
			p.PatchMergeKey, p.PatchStrategy, p.ListType, p.ListMapKeys = ext.mergeKey, ext.strategy, ext.listType, ext.mapKeys
		}
		s.Properties[fd.JSONName()] = p
	}
	s.Required = required[md.FullName()]
	if gvk, ok := subresourceKinds[md.FullName()]; ok {
		s.GroupVersionKind = []GVK{gvk}
	} else if r, ok := apis.ByMessage(string(md.FullName())); ok {
		s.GroupVersionKind = []GVK{{Group: r.Group.Name, Version: r.Group.Version, Kind: r.Kind}}
	} else if r, ok := apis.ByMessage(strings.TrimSuffix(string(md.FullName()), "List")); ok && strings.HasSuffix(string(md.Name()), "List") {
		s.GroupVersionKind = []GVK{{Group: r.Group.Name, Version: r.Group.Version, Kind: r.Kind + "List"}}
	}
	return s
}

// field is the schema of one field's value.
func (b *builder) field(fd protoreflect.FieldDescriptor) *Schema {
	switch {
	case fd.IsMap():
		return &Schema{Type: "object", AdditionalProperties: b.value(fd, fd.MapValue())}
	case fd.IsList():
		return &Schema{Type: "array", Items: b.value(fd, fd)}
	}
	return b.value(fd, fd)
}

// value is the schema of a single value of fd (vd is fd itself, or its map value).
func (b *builder) value(fd, vd protoreflect.FieldDescriptor) *Schema {
	switch {
	case quantityFields[fd.FullName()]:
		return b.named(quantityDef, b.eitherType(Schema{
			Description: "Quantity is a fixed-point representation of a number, written as a string (\"100m\", \"128Mi\")."}, "string", "number"))
	case fd.FullName() == "podline.meta.v1.ManagedFieldsEntry.fields_v1":
		return b.named(fieldsV1Def, Schema{Type: "object",
			Description: "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format."})
	}
	switch vd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return b.ref(vd.Message())
	case protoreflect.StringKind, protoreflect.EnumKind:
		return &Schema{Type: "string"}
	case protoreflect.BoolKind:
		return &Schema{Type: "boolean"}
	case protoreflect.BytesKind:
		return &Schema{Type: "string", Format: "byte"}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return &Schema{Type: "integer", Format: "int32"}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return &Schema{Type: "number", Format: "double"}
	}
	return &Schema{Type: "integer", Format: "int64"}
}

// describe sets a field's description. A reference takes no sibling
// description in OpenAPI, so it is wrapped in allOf, as Kubernetes does.
func describe(s *Schema, d string) *Schema {
	if s.Ref != "" {
		return &Schema{AllOf: []*Schema{s}, Description: d}
	}
	s.Description = d
	return s
}
