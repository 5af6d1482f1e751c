package compat

import (
	"bufio"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
)

// The apiserver reads Kubernetes' protobuf through a table of field
// numbers, JSON names and types (services/apiserver/internal/k8sproto/
// fields.txt). This test holds every line of it against the protobuf and
// JSON tags of the real k8s.io/api Go types, message by message from each
// kind the table names, and fails on any field either side lacks.
func TestProtobufTableMatchesKubernetesTypes(t *testing.T) {
	tbl := readFieldTable(t, "../../services/apiserver/internal/k8sproto/fields.txt")
	c := &tableCheck{t: t, tbl: tbl, seen: map[string]bool{}}
	for _, k := range tbl.kinds {
		gv := k[0]
		if gv == "*" {
			gv = "v1"
		}
		gvk := schema.FromAPIVersionAndKind(gv, k[1])
		obj, err := scheme.Scheme.New(gvk)
		if err != nil {
			t.Errorf("kind %s %s: %v", k[0], k[1], err)
			continue
		}
		c.message(k[2], reflect.TypeOf(obj).Elem())
	}
	for name := range tbl.messages {
		if !c.seen[name] {
			t.Errorf("message %s is in the table but no kind reaches it", name)
		}
	}
	if len(c.seen) < 200 {
		t.Fatalf("only %d messages checked", len(c.seen))
	}
}

type tableField struct{ json, typ string }

type fieldTable struct {
	kinds    [][3]string
	messages map[string]map[int]tableField
}

// readFieldTable reads the table's text form: kind lines, then message
// blocks of "<number> <jsonName> <type>" lines.
func readFieldTable(t *testing.T, path string) *fieldTable {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl := &fieldTable{messages: map[string]map[int]tableField{}}
	var cur map[int]tableField
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		switch {
		case len(w) == 0 || strings.HasPrefix(w[0], "#"):
		case w[0] == "kind":
			tbl.kinds = append(tbl.kinds, [3]string{w[1], w[2], w[3]})
		case w[0] == "message":
			cur = map[int]tableField{}
			tbl.messages[w[1]] = cur
		default:
			n, _ := strconv.Atoi(w[0])
			cur[n] = tableField{json: w[1], typ: w[2]}
		}
	}
	return tbl
}

type tableCheck struct {
	t    *testing.T
	tbl  *fieldTable
	seen map[string]bool
}

// message checks one table message against the Go struct it stands for.
func (c *tableCheck) message(name string, typ reflect.Type) {
	if c.seen[name] {
		return
	}
	c.seen[name] = true
	fields, ok := c.tbl.messages[name]
	if !ok {
		c.t.Errorf("no message %s in the table (Go type %s)", name, typ)
		return
	}
	if want := pkgShort(typ) + "." + typ.Name(); want != name {
		c.t.Errorf("message %s stands for Go type %s", name, want)
	}
	found := map[int]bool{}
	for i := range typ.NumField() {
		sf := typ.Field(i)
		pb, ok := sf.Tag.Lookup("protobuf")
		if !ok {
			continue
		}
		parts := strings.Split(pb, ",")
		num, _ := strconv.Atoi(parts[1])
		found[num] = true
		tf, ok := fields[num]
		where := name + " field " + strconv.Itoa(num) + " (" + sf.Name + ")"
		if !ok {
			c.t.Errorf("%s is not in the table", where)
			continue
		}
		jsonTag := sf.Tag.Get("json")
		jsonName, opts, _ := strings.Cut(jsonTag, ",")
		if sf.Anonymous && jsonName == "" {
			if !strings.HasPrefix(tf.json, "...") {
				c.t.Errorf("%s is an embedded struct; the table does not inline it", where)
			}
		} else if tf.json != jsonName {
			c.t.Errorf("%s: table says JSON name %q, Go says %q", where, tf.json, jsonName)
		}
		pointer := sf.Type.Kind() == reflect.Pointer
		keepZero := pointer || !strings.Contains(opts, "omitempty")
		if want := c.typeName(sf.Type, keepZero); tf.typ != want {
			c.t.Errorf("%s: table says type %s, Go says %s", where, tf.typ, want)
		}
	}
	for num := range fields {
		if !found[num] {
			c.t.Errorf("%s field %d is in the table but not in Go type %s", name, num, typ)
		}
	}
}

var specialTypes = map[reflect.Type]string{
	reflect.TypeFor[metav1.Time]():        "time",
	reflect.TypeFor[metav1.MicroTime]():   "microtime",
	reflect.TypeFor[resource.Quantity]():  "quantity",
	reflect.TypeFor[intstr.IntOrString](): "intorstring",
	reflect.TypeFor[metav1.FieldsV1]():    "rawjson",
}

// typeName is the table's type for a Go field type, checking messages it reaches.
func (c *tableCheck) typeName(typ reflect.Type, keepZero bool) string {
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if s, ok := specialTypes[typ]; ok {
		return s
	}
	star := ""
	if keepZero {
		star = "*"
	}
	switch typ.Kind() {
	case reflect.String, reflect.Bool, reflect.Int32, reflect.Int64:
		return star + typ.Kind().String()
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.Uint8 {
			return star + "bytes"
		}
		return "[]" + c.typeName(typ.Elem(), false)
	case reflect.Map:
		return "map[" + c.typeName(typ.Key(), false) + "]" + c.typeName(typ.Elem(), false)
	case reflect.Struct:
		name := pkgShort(typ) + "." + typ.Name()
		c.message(name, typ)
		return name
	}
	c.t.Errorf("Go type %s has no table type", typ)
	return "?"
}

// pkgShort names a Go package as the table does: k8s.io/api/core/v1 is
// core.v1, k8s.io/apimachinery/pkg/apis/meta/v1 is meta.v1.
func pkgShort(typ reflect.Type) string {
	p := strings.TrimPrefix(typ.PkgPath(), "k8s.io/api/")
	p = strings.TrimPrefix(p, "k8s.io/apimachinery/pkg/apis/")
	return strings.ReplaceAll(p, "/", ".")
}
