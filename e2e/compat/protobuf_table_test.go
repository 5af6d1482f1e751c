package compat

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
)

const fieldTablePath = "../../services/apiserver/internal/k8sproto/fields.txt"

var updateFieldTable = flag.Bool("update-k8sproto-table", false,
	"rewrite the message blocks of "+fieldTablePath+" from the k8s.io/api Go types, for the kinds its kind lines name")

// The apiserver reads Kubernetes' protobuf through a table of field
// numbers, JSON names and types (services/apiserver/internal/k8sproto/
// fields.txt). This test derives the same table from the protobuf and JSON
// tags of the real k8s.io/api Go types, from each kind the table names
// through every message it reaches, and fails on any line that differs. To
// serve a new kind, add its kind line and run
// go test -run ProtobufTable -update-k8sproto-table.
func TestProtobufTableMatchesKubernetesTypes(t *testing.T) {
	tbl := readFieldTable(t, fieldTablePath)
	d := &tableDeriver{t: t, messages: map[string][]string{}}
	for _, k := range tbl.kinds {
		gv := k[0]
		if gv == "*" {
			gv = "v1"
		}
		obj, err := scheme.Scheme.New(schema.FromAPIVersionAndKind(gv, k[1]))
		if err != nil {
			t.Errorf("kind %s %s: %v", k[0], k[1], err)
			continue
		}
		if got := d.message(reflect.TypeOf(obj).Elem()); got != k[2] {
			t.Errorf("kind %s %s names message %s; its Go type is %s", k[0], k[1], k[2], got)
		}
	}
	if *updateFieldTable {
		writeFieldTable(t, fieldTablePath, tbl, d.messages)
		return
	}
	for _, name := range sortedUnion(tbl.messages, d.messages) {
		have, want := tbl.messages[name], d.messages[name]
		if !slices.Equal(have, want) {
			t.Errorf("message %s:\nthe table has\n  %s\nk8s.io/api has\n  %s", name,
				strings.Join(have, "\n  "), strings.Join(want, "\n  "))
		}
	}
	if len(d.messages) < 200 {
		t.Fatalf("only %d messages derived", len(d.messages))
	}
}

// fieldTable is the text form: a comment header, kind lines, then message
// blocks of "<number> <jsonName> <type>" lines.
type fieldTable struct {
	header   []string
	kinds    [][3]string
	messages map[string][]string
}

func readFieldTable(t *testing.T, path string) *fieldTable {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl := &fieldTable{messages: map[string][]string{}}
	var cur string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		w := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "#"):
			tbl.header = append(tbl.header, line)
		case len(w) == 0:
		case w[0] == "kind":
			tbl.kinds = append(tbl.kinds, [3]string{w[1], w[2], w[3]})
		case w[0] == "message":
			cur = w[1]
			tbl.messages[cur] = []string{}
		default:
			tbl.messages[cur] = append(tbl.messages[cur], strings.Join(w, " "))
		}
	}
	return tbl
}

func writeFieldTable(t *testing.T, path string, tbl *fieldTable, messages map[string][]string) {
	var b strings.Builder
	for _, h := range tbl.header {
		fmt.Fprintln(&b, h)
	}
	for _, k := range tbl.kinds {
		fmt.Fprintf(&b, "kind %s %s %s\n", k[0], k[1], k[2])
	}
	for _, name := range sortedUnion(messages, nil) {
		fmt.Fprintf(&b, "\nmessage %s\n%s\n", name, strings.Join(messages[name], "\n"))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sortedUnion(a, b map[string][]string) []string {
	var names []string
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// tableDeriver writes the table's lines for Go types, message by message.
type tableDeriver struct {
	t        *testing.T
	messages map[string][]string
}

// message derives the lines of a Go struct and of every struct it reaches,
// and returns its message name.
func (d *tableDeriver) message(typ reflect.Type) string {
	name := pkgShort(typ) + "." + typ.Name()
	if _, done := d.messages[name]; done {
		return name
	}
	d.messages[name] = nil
	lines := []string{}
	for i := range typ.NumField() {
		sf := typ.Field(i)
		pb, ok := sf.Tag.Lookup("protobuf")
		if !ok {
			continue
		}
		parts := strings.Split(pb, ",")
		protoName := lowerFirst(sf.Name)
		for _, p := range parts {
			if n, ok := strings.CutPrefix(p, "name="); ok {
				protoName = n
			}
		}
		jsonName, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if sf.Anonymous && jsonName == "" {
			jsonName = "..." + protoName
		} else if jsonName != protoName {
			d.t.Errorf("%s.%s: JSON name %q differs from its protobuf name %q", name, sf.Name, jsonName, protoName)
		}
		keepZero := sf.Type.Kind() == reflect.Pointer || !strings.Contains(opts, "omitempty")
		lines = append(lines, parts[1]+" "+jsonName+" "+d.typeName(sf.Type, keepZero))
	}
	d.messages[name] = lines
	return name
}

// specialTypes are read as their own JSON forms, not as messages.
var specialTypes = map[reflect.Type]string{
	reflect.TypeFor[metav1.Time]():        "time",
	reflect.TypeFor[metav1.MicroTime]():   "microtime",
	reflect.TypeFor[resource.Quantity]():  "quantity",
	reflect.TypeFor[intstr.IntOrString](): "intorstring",
	reflect.TypeFor[metav1.FieldsV1]():    "rawjson",
}

// typeName is the table's type for a Go field type; "*" marks a scalar
// whose zero Go's JSON encoder writes.
func (d *tableDeriver) typeName(typ reflect.Type, keepZero bool) string {
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
		return "[]" + d.typeName(typ.Elem(), false)
	case reflect.Map:
		return "map[" + d.typeName(typ.Key(), false) + "]" + d.typeName(typ.Elem(), false)
	case reflect.Struct:
		return d.message(typ)
	}
	d.t.Errorf("Go type %s has no table type", typ)
	return "?"
}

// pkgShort names a Go package as the table does: k8s.io/api/core/v1 is
// core.v1, k8s.io/apimachinery/pkg/apis/meta/v1 is meta.v1.
func pkgShort(typ reflect.Type) string {
	p := strings.TrimPrefix(typ.PkgPath(), "k8s.io/api/")
	p = strings.TrimPrefix(p, "k8s.io/apimachinery/pkg/apis/")
	return strings.ReplaceAll(p, "/", ".")
}

func lowerFirst(s string) string {
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}
