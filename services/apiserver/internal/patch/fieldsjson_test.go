package patch

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestMembersOfJSONMatchFieldsOfTheDecodedValues(t *testing.T) {
	skipStatus := func(p []string) bool { return len(p) == 1 && p[0] == "f:status" }
	docs := map[string]string{
		"empty":             `{}`,
		"scalars and empty": `{"a":1,"b":"x","c":true,"d":null,"e":{},"f":[],"g":-1.5e3}`,
		"deployment": `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web"},"finalizers":["a","b"]},
			"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":1}},
			"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx","ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":443}],
			"env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],"resources":{"limits":{"cpu":"1"}},
			"args":["--a","--b"]}],"volumes":[{"name":"data","emptyDir":{}}],"nodeSelector":{}}}},"status":{"replicas":2}}`,
		"list items without their key, or not objects": `{"spec":{"containers":[{"image":"a"},"x",3,{"name":"b"}],"finalizers":[{"b":1,"a":[2]},null,1.0]}}`,
		"keys and values that encoding/json escapes": `{"metadata":{"labels":{"a<b>&c":"v","\u00e9t\u00e9":"\u2028","q\"uote":"\\"},
			"finalizers":["x<y","é","\u2029","\"","plain"]},
			"spec":{"containers":[{"name":"a&b"},{"name":"é"},{"name":"x\"y"}],"ports":[{"port":1e2},{"port":-0}]}}`,
		"merge key as an object":   `{"spec":{"containers":[{"name":{"z":1,"a":2}}]}}`,
		"merge key written twice":  `{"spec":{"containers":[{"name":"a","n\u0061me":"b"}]}}`,
		"whitespace":               " \n{ \"a\" : [ 1 , 2 ] ,\t\"spec\" : { \"finalizers\" : [ \"x\" , \"y\" ] } }\n",
		"skipped field with lists": `{"status":{"conditions":[{"type":"Ready"}]},"spec":{"conditions":[{"type":"Ready","status":"True"}]}}`,
		"atomic lists of objects":  `{"subsets":[{"addresses":[{"ip":"10.0.0.1"}]}],"spec":{"tolerations":[{"key":"k"}]}}`,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			want := FieldsOf(obj(t, doc), skipStatus)
			members, err := MembersOfJSON([]byte(doc), skipStatus)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := pathStrings(members.Set()), pathStrings(want); !slices.Equal(g, w) {
				t.Fatalf("members\n got %q\nwant %q", g, w)
			}
			if g, w := members.MarshalFieldsV1(), want.MarshalFieldsV1(); g != w {
				t.Fatalf("fieldsV1\n got %s\nwant %s", g, w)
			}
		})
	}
}

func pathStrings(s FieldSet) []string {
	var out []string
	for k, p := range s {
		if k != strings.Join(p, sep) {
			out = append(out, "key "+k+" does not name its path")
		}
		out = append(out, strings.Join(p, " "))
	}
	sort.Strings(out)
	return out
}

func TestMembersOfJSONRefuseWhatIsNotAnObject(t *testing.T) {
	for _, doc := range []string{``, `[]`, `"x"`, `{`, `{"a"}`, `{"a":}`, `{"a":1}x`, `{"a":"x`, `{"a":tru}`, `{"a":1,}`,
		`{"a":[1,2}`, `{"spec":{"containers":[{"name":"a"}`, `{"finalizers":["a"`, `{a:1}`, `{"a":01x}`} {
		if _, err := MembersOfJSON([]byte(doc), nil); !errors.Is(err, errJSON) {
			t.Errorf("%q: got %v, want an invalid JSON error", doc, err)
		}
	}
}

func TestMarshalFieldsV1WritesThePathsAsATree(t *testing.T) {
	sets := [][][]string{
		nil,
		{{"f:a"}},
		{{"f:a"}, {"f:a", "f:b"}, {"f:a", "f:b", "f:c"}},
		{{"f:b"}, {"f:a", "f:z"}, {"f:a", "f:y", "f:x"}, {"f:ab"}, {"f:a\x01"}},
		{{"f:spec", "f:containers", `k:{"name":"web"}`, "."}, {"f:spec", "f:containers", `k:{"name":"web"}`, "f:image"},
			{"f:spec", "f:containers", `k:{"name":"side"}`, "."}, {"f:metadata", "f:finalizers", `v:"x"`}, {"f:spec", "f:replicas"}},
		{{"f:metadata", "f:labels", "f:\"q\\\n\x00é"}, {"f:metadata", "f:labels", "f:<&>"}},
	}
	for _, paths := range sets {
		s := FieldSet{}
		for _, p := range paths {
			s.add(p)
		}
		want := treeFieldsV1(paths)
		if got := s.MarshalFieldsV1(); got != want {
			t.Errorf("%q\n got %s\nwant %s", paths, got, want)
		}
		// As a walk finds them: reversed, and each path twice.
		var m Members
		for i := len(paths) - 1; i >= 0; i-- {
			m = append(m, paths[i], slices.Clone(paths[i]))
		}
		if got := m.MarshalFieldsV1(); got != want {
			t.Errorf("%q as Members\n got %s\nwant %s", paths, got, want)
		}
	}
}

// treeFieldsV1 writes fieldsV1 the plain way: build the tree, write each
// level with its keys sorted.
func treeFieldsV1(paths [][]string) string {
	type node map[string]any
	root := node{}
	for _, p := range paths {
		n := root
		for _, e := range p {
			next, ok := n[e].(node)
			if !ok {
				next = node{}
				n[e] = next
			}
			n = next
		}
	}
	var b strings.Builder
	var write func(node)
	write = func(n node) {
		keys := make([]string, 0, len(n))
		for k := range n {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(&b, k)
			b.WriteByte(':')
			write(n[k].(node))
		}
		b.WriteByte('}')
	}
	write(root)
	return b.String()
}

// FuzzMembersOfJSON checks MembersOfJSON against FieldsOf on any JSON
// object, written as encoding/json writes it (no key repeated).
func FuzzMembersOfJSON(f *testing.F) {
	f.Add(`{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80}]}],"finalizers":["x",1]}}`)
	f.Add(`{"metadata":{"labels":{"<":"é"}},"spec":{"ports":[{"port":"\u2028"},{}],"conditions":[[],{"type":{}}]}}`)
	f.Fuzz(func(t *testing.T, doc string) {
		v, err := DecodeObject([]byte(doc))
		if err != nil {
			return
		}
		data, err := Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		members, err := MembersOfJSON(data, nil)
		if err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		want := FieldsOf(v, nil)
		if g, w := pathStrings(members.Set()), pathStrings(want); !slices.Equal(g, w) {
			t.Fatalf("%s: members\n got %q\nwant %q", data, g, w)
		}
		if g, w := members.MarshalFieldsV1(), want.MarshalFieldsV1(); g != w {
			t.Fatalf("%s: fieldsV1\n got %s\nwant %s", data, g, w)
		}
	})
}
