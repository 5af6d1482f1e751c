package patch

import (
	"encoding/json"
	"errors"
	"testing"
)

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	v, err := Decode([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func assertJSON(t *testing.T, got any, want string) {
	t.Helper()
	if !Equal(got, mustDecode(want)) {
		b, _ := json.Marshal(got)
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func mustDecode(s string) any {
	v, err := Decode([]byte(s))
	if err != nil {
		panic(err)
	}
	return v
}

func TestMergePatchFollowsRFC7386(t *testing.T) {
	// The examples of RFC 7386, appendix A.
	cases := []struct{ doc, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"e":null}`, `{"a":1}`, `{"e":null,"a":1}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
	}
	for _, c := range cases {
		doc := mustJSON(t, c.doc)
		got := MergePatch(doc, mustJSON(t, c.patch))
		assertJSON(t, got, c.want)
		assertJSON(t, doc, c.doc) // the input is not changed
	}
}

func TestJSONPatchOperations(t *testing.T) {
	doc := `{"metadata":{"labels":{"a/b":"1"}},"spec":{"list":[1,2,3]}}`
	cases := []struct {
		name, patch, want string
		err               error
	}{
		{"add member", `[{"op":"add","path":"/metadata/labels/c","value":"2"}]`,
			`{"metadata":{"labels":{"a/b":"1","c":"2"}},"spec":{"list":[1,2,3]}}`, nil},
		{"escaped pointer", `[{"op":"replace","path":"/metadata/labels/a~1b","value":"x"}]`,
			`{"metadata":{"labels":{"a/b":"x"}},"spec":{"list":[1,2,3]}}`, nil},
		{"insert and append", `[{"op":"add","path":"/spec/list/0","value":0},{"op":"add","path":"/spec/list/-","value":4}]`,
			`{"metadata":{"labels":{"a/b":"1"}},"spec":{"list":[0,1,2,3,4]}}`, nil},
		{"remove item", `[{"op":"remove","path":"/spec/list/1"}]`,
			`{"metadata":{"labels":{"a/b":"1"}},"spec":{"list":[1,3]}}`, nil},
		{"move", `[{"op":"move","from":"/spec/list","path":"/spec/moved"}]`,
			`{"metadata":{"labels":{"a/b":"1"}},"spec":{"moved":[1,2,3]}}`, nil},
		{"copy", `[{"op":"copy","from":"/spec/list/2","path":"/spec/three"}]`,
			`{"metadata":{"labels":{"a/b":"1"}},"spec":{"list":[1,2,3],"three":3}}`, nil},
		{"test passes then replace", `[{"op":"test","path":"/spec/list/0","value":1.0},{"op":"replace","path":"/spec/list/0","value":9}]`,
			`{"metadata":{"labels":{"a/b":"1"}},"spec":{"list":[9,2,3]}}`, nil},
		{"test fails", `[{"op":"replace","path":"/spec/list/0","value":9},{"op":"test","path":"/spec/list/1","value":5}]`, "", ErrCannotApply},
		{"replace missing", `[{"op":"replace","path":"/spec/none","value":1}]`, "", ErrCannotApply},
		{"remove missing", `[{"op":"remove","path":"/metadata/annotations"}]`, "", ErrCannotApply},
		{"index out of range", `[{"op":"add","path":"/spec/list/7","value":1}]`, "", ErrCannotApply},
		{"unknown op", `[{"op":"frob","path":"/a"}]`, "", ErrBadPatch},
		{"not an array", `{"op":"add"}`, "", ErrBadPatch},
		{"add without value", `[{"op":"add","path":"/a"}]`, "", ErrBadPatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := mustJSON(t, doc)
			ops, err := ParseJSONPatch([]byte(c.patch))
			var got any
			if err == nil {
				got, err = JSONPatch(d, ops)
			}
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertJSON(t, got, c.want)
			assertJSON(t, d, doc)
		})
	}
}

func TestStrategicMergeKeys(t *testing.T) {
	deploy := `{"metadata":{"finalizers":["a"]},"spec":{"template":{"spec":{
		"containers":[{"name":"web","image":"nginx:1","ports":[{"containerPort":80,"name":"http"}],
			"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],
			"volumeMounts":[{"name":"data","mountPath":"/data"}]},
			{"name":"side","image":"busybox"}],
		"volumes":[{"name":"data","emptyDir":{}}],
		"tolerations":[{"key":"k1","operator":"Exists"}]}}},
		"status":{"conditions":[{"type":"Available","status":"False"},{"type":"Progressing","status":"True"}]}}`
	cases := []struct {
		name, patch, want string
		err               error
	}{
		{"containers merge by name, image changed, others kept",
			`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:2"}]}}}}`,
			`{"metadata":{"finalizers":["a"]},"spec":{"template":{"spec":{
				"containers":[{"name":"web","image":"nginx:2","ports":[{"containerPort":80,"name":"http"}],
					"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],
					"volumeMounts":[{"name":"data","mountPath":"/data"}]},
					{"name":"side","image":"busybox"}],
				"volumes":[{"name":"data","emptyDir":{}}],
				"tolerations":[{"key":"k1","operator":"Exists"}]}}},
				"status":{"conditions":[{"type":"Available","status":"False"},{"type":"Progressing","status":"True"}]}}`, nil},
		{"env by name, ports by containerPort, $patch delete, new container appended",
			`{"spec":{"template":{"spec":{"containers":[
				{"name":"web","env":[{"name":"B","$patch":"delete"},{"name":"C","value":"3"},{"name":"A","value":"9"}],"ports":[{"containerPort":443}]},
				{"name":"side","$patch":"delete"},
				{"name":"new","image":"x"}]}}}}`,
			`{"metadata":{"finalizers":["a"]},"spec":{"template":{"spec":{
				"containers":[{"name":"web","image":"nginx:1","ports":[{"containerPort":80,"name":"http"},{"containerPort":443}],
					"env":[{"name":"A","value":"9"},{"name":"C","value":"3"}],
					"volumeMounts":[{"name":"data","mountPath":"/data"}]},
					{"name":"new","image":"x"}],
				"volumes":[{"name":"data","emptyDir":{}}],
				"tolerations":[{"key":"k1","operator":"Exists"}]}}},
				"status":{"conditions":[{"type":"Available","status":"False"},{"type":"Progressing","status":"True"}]}}`, nil},
		{"conditions by type; tolerations replaced whole; finalizers as a set",
			`{"metadata":{"finalizers":["b","a"]},"status":{"conditions":[{"type":"Available","status":"True"}]},
			  "spec":{"template":{"spec":{"tolerations":[{"key":"k2","operator":"Exists"}]}}}}`,
			`{"metadata":{"finalizers":["a","b"]},"spec":{"template":{"spec":{
				"containers":[{"name":"web","image":"nginx:1","ports":[{"containerPort":80,"name":"http"}],
					"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],
					"volumeMounts":[{"name":"data","mountPath":"/data"}]},
					{"name":"side","image":"busybox"}],
				"volumes":[{"name":"data","emptyDir":{}}],
				"tolerations":[{"key":"k2","operator":"Exists"}]}}},
				"status":{"conditions":[{"type":"Available","status":"True"},{"type":"Progressing","status":"True"}]}}`, nil},
		{"$setElementOrder, $deleteFromPrimitiveList, $patch replace on a map, $retainKeys",
			`{"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]},
			  "spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"side"},{"name":"web"}],
				"containers":[{"name":"web","volumeMounts":[{"mountPath":"/data","$patch":"delete"}]}],
				"volumes":[{"name":"data","$retainKeys":["name","hostPath"],"hostPath":{"path":"/x"}}]}}},
			  "status":{"$patch":"replace","replicas":1}}`,
			`{"metadata":{"finalizers":[]},"spec":{"template":{"spec":{
				"containers":[{"name":"side","image":"busybox"},
					{"name":"web","image":"nginx:1","ports":[{"containerPort":80,"name":"http"}],
					"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"volumeMounts":[]}],
				"volumes":[{"name":"data","hostPath":{"path":"/x"}}],
				"tolerations":[{"key":"k1","operator":"Exists"}]}}},
				"status":{"replicas":1}}`, nil},
		{"list item without its merge key",
			`{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}`, "", ErrBadPatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := mustJSON(t, deploy).(map[string]any)
			got, err := StrategicMerge(doc, mustJSON(t, c.patch).(map[string]any))
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertJSON(t, got, c.want)
			assertJSON(t, doc, deploy)
		})
	}
}

func TestStrategicListReplaceDirective(t *testing.T) {
	doc := mustJSON(t, `{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}`).(map[string]any)
	got, err := StrategicMerge(doc, mustJSON(t, `{"spec":{"containers":[{"name":"c"},{"$patch":"replace"}]}}`).(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, got, `{"spec":{"containers":[{"name":"c"}]}}`)
}

// An Endpoints' subsets and their addresses are atomic lists, as in
// Kubernetes: "addresses" there is not a node's, merged by type.
func TestEndpointsListsAreAtomic(t *testing.T) {
	for _, path := range [][]string{{"subsets"}, {"subsets", "addresses"}, {"subsets", "notReadyAddresses"}, {"subsets", "ports"}} {
		if r := Rule(path); r.Kind != Atomic {
			t.Errorf("%v merges as %+v, want atomic", path, r)
		}
	}
	if r := Rule([]string{"status", "addresses"}); r != (ListRule{Map, "type"}) {
		t.Errorf("a node's status.addresses merges as %+v, want by type", r)
	}
	doc := mustJSON(t, `{"subsets":[{"addresses":[{"ip":"10.0.0.1"},{"ip":"10.0.0.2"}],"ports":[{"port":80}]}]}`).(map[string]any)
	got, err := StrategicMerge(doc, mustJSON(t, `{"subsets":[{"addresses":[{"ip":"10.0.0.3"}]}]}`).(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, got, `{"subsets":[{"addresses":[{"ip":"10.0.0.3"}]}]}`)
}
