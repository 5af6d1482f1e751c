package printers

import (
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"podline.dev/pkg/k8sjson"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
)

// Table is meta.k8s.io/v1 Table.
type Table struct {
	Kind              string   `json:"kind"`
	APIVersion        string   `json:"apiVersion"`
	Metadata          ListMeta `json:"metadata"`
	ColumnDefinitions []Column `json:"columnDefinitions"`
	Rows              []Row    `json:"rows"`
}

// ListMeta is the part of meta/v1 ListMeta a Table carries.
type ListMeta struct {
	ResourceVersion    string `json:"resourceVersion,omitempty"`
	Continue           string `json:"continue,omitempty"`
	RemainingItemCount *int64 `json:"remainingItemCount,omitempty"`
}

// Column is meta/v1 TableColumnDefinition. Priority 0 columns are always
// shown; higher ones only in kubectl's wide output.
type Column struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format"`
	Description string `json:"description"`
	Priority    int32  `json:"priority"`
}

// Row is meta/v1 TableRow: one cell per column, and the object it shows.
type Row struct {
	Cells      []any           `json:"cells"`
	Conditions []RowCondition  `json:"conditions,omitempty"`
	Object     json.RawMessage `json:"object,omitempty"`
}

// RowCondition is meta/v1 TableRowCondition.
type RowCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// IncludeObject says what each row carries, as the includeObject parameter.
type IncludeObject string

const (
	IncludeNone     IncludeObject = "None"
	IncludeMetadata IncludeObject = "Metadata"
	IncludeObjects  IncludeObject = "Object"
)

// ParseIncludeObject reads the includeObject parameter; Metadata is
// Kubernetes' default.
func ParseIncludeObject(v string) (IncludeObject, error) {
	switch IncludeObject(v) {
	case "":
		return IncludeMetadata, nil
	case IncludeNone, IncludeMetadata, IncludeObjects:
		return IncludeObject(v), nil
	}
	return "", fmt.Errorf("unsupported includeObject %q: must be one of None, Metadata, Object", v)
}

// Options shape one conversion.
type Options struct {
	Include IncludeObject
	// Now is the time ages are measured at.
	Now time.Time
	// NoHeaders leaves out the column definitions (watch events after the first).
	NoHeaders bool
}

// handler prints one kind.
type handler struct {
	columns []Column
	row     func(m proto.Message, now time.Time) Row
}

// rowFunc adapts a typed row function to a handler's.
func rowFunc[T proto.Message](f func(T, time.Time) []any) func(proto.Message, time.Time) Row {
	return func(m proto.Message, now time.Time) Row { return Row{Cells: f(m.(T), now)} }
}

// handlers maps a kind's proto message to its printer; each group's file
// adds its kinds.
var handlers = map[protoreflect.FullName]handler{}

func register(m proto.Message, h handler) {
	handlers[m.ProtoReflect().Descriptor().FullName()] = h
}

// defaultHandler prints a kind without its own columns: name and age.
var defaultHandler = handler{
	columns: []Column{nameColumn, {Name: "Created At", Type: "date", Description: "CreationTimestamp is the time the object was created."}},
	row: func(m proto.Message, now time.Time) Row {
		meta := metadataOf(m)
		return Row{Cells: []any{meta.GetName(), since(meta.GetCreationTimestamp(), now)}}
	},
}

var nameColumn = Column{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."}

var ageColumn = Column{Name: "Age", Type: "string", Description: "CreationTimestamp is the time the object was created."}

// Convert prints an object or a list of objects as a Table. A list's
// element kind picks the columns, so an empty list still has them.
func Convert(m proto.Message, opts Options) (*Table, error) {
	t := &Table{Kind: "Table", APIVersion: "meta.k8s.io/v1", Rows: []Row{}}
	md := m.ProtoReflect().Descriptor()
	items := md.Fields().ByName("items")
	var objs []proto.Message
	var elem protoreflect.MessageDescriptor
	if items != nil && items.IsList() && items.Message() != nil {
		elem = items.Message()
		list := m.ProtoReflect().Get(items).List()
		for i := 0; i < list.Len(); i++ {
			objs = append(objs, list.Get(i).Message().Interface())
		}
		if lm, ok := messageField(m, "metadata").(*metav1.ListMeta); ok {
			t.Metadata = ListMeta{ResourceVersion: lm.GetResourceVersion(), Continue: lm.GetContinue()}
			if lm.RemainingItemCount != nil {
				n := lm.GetRemainingItemCount()
				t.Metadata.RemainingItemCount = &n
			}
		}
	} else {
		elem = md
		objs = []proto.Message{m}
		t.Metadata.ResourceVersion = metadataOf(m).GetResourceVersion()
	}
	h, ok := handlers[elem.FullName()]
	if !ok {
		h = defaultHandler
	}
	if !opts.NoHeaders {
		t.ColumnDefinitions = h.columns
	}
	for _, obj := range objs {
		row := h.row(obj, opts.Now)
		raw, err := rowObject(obj, opts.Include)
		if err != nil {
			return nil, err
		}
		row.Object = raw
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// rowObject is what a row carries: nothing, PartialObjectMetadata, or the
// whole object with its apiVersion and kind.
func rowObject(m proto.Message, include IncludeObject) (json.RawMessage, error) {
	switch include {
	case IncludeNone:
		return nil, nil
	case IncludeObjects:
		if r, ok := apis.ByMessage(string(m.ProtoReflect().Descriptor().FullName())); ok {
			m = withTypeMeta(m, r)
		}
		return k8sjson.Marshal(m)
	}
	meta, err := k8sjson.Marshal(metadataOf(m))
	if err != nil {
		return nil, err
	}
	out := []byte(`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":`)
	out = append(out, meta...)
	return append(out, '}'), nil
}

// withTypeMeta returns m with apiVersion and kind set, copying it if they
// are missing (list items carry neither).
func withTypeMeta(m proto.Message, r apis.Resource) proto.Message {
	pm := m.ProtoReflect()
	av, kind := pm.Descriptor().Fields().ByName("api_version"), pm.Descriptor().Fields().ByName("kind")
	if av == nil || kind == nil || (pm.Get(av).String() != "" && pm.Get(kind).String() != "") {
		return m
	}
	c := proto.Clone(m).ProtoReflect()
	c.Set(av, protoreflect.ValueOfString(r.Group.GroupVersion()))
	c.Set(kind, protoreflect.ValueOfString(r.Kind))
	return c.Interface()
}

// metadataOf finds an object's ObjectMeta (nil when it has none).
func metadataOf(m proto.Message) *metav1.ObjectMeta {
	meta, _ := messageField(m, "metadata").(*metav1.ObjectMeta)
	return meta
}

// messageField is the set message field of m with that name, or nil.
func messageField(m proto.Message, name protoreflect.Name) proto.Message {
	pm := m.ProtoReflect()
	fd := pm.Descriptor().Fields().ByName(name)
	if fd == nil || fd.Message() == nil || !pm.Has(fd) {
		return nil
	}
	return pm.Get(fd).Message().Interface()
}
