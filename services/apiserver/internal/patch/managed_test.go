package patch

import (
	"errors"
	"strings"
	"testing"
)

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	return mustJSON(t, s).(map[string]any)
}

func skipServerFields(p []string) bool {
	return len(p) == 1 && (p[0] == "f:apiVersion" || p[0] == "f:kind" || p[0] == "f:status")
}

func TestFieldsOfMatchesKubernetesFieldsV1(t *testing.T) {
	o := obj(t, `{"apiVersion":"apps/v1","metadata":{"labels":{"app":"web"},"finalizers":["x"]},
		"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx"}],"nodeSelector":{}}}}}`)
	got := FieldsOf(o, skipServerFields).MarshalFieldsV1()
	want := `{"f:metadata":{"f:finalizers":{"v:\"x\"":{}},"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}},"f:nodeSelector":{}}}}}`
	if got != want {
		t.Errorf("fieldsV1\n got %s\nwant %s", got, want)
	}
	back, err := ParseFieldsV1(got)
	if err != nil || back.MarshalFieldsV1() != want {
		t.Errorf("round trip: %v %s", err, back.MarshalFieldsV1())
	}
}

func TestUpdateMovesChangedFieldsToTheWriter(t *testing.T) {
	v1 := obj(t, `{"spec":{"replicas":1,"paused":true,"template":{"spec":{"containers":[{"name":"web","image":"a"}]}}}}`)
	m := Managed(nil).Update(nil, v1, "creator", "apps/v1", "", 1, nil)
	if len(m) != 1 || len(m[0].Set) != 5 {
		t.Fatalf("creator should own every field: %+v", m)
	}
	v2 := obj(t, `{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"web","image":"a"}]}}}}`)
	m = m.Update(v1, v2, "scaler", "apps/v1", "", 2, nil)
	if len(m) != 2 {
		t.Fatalf("entries: %d", len(m))
	}
	creator, scaler := m[0], m[1]
	if scaler.Set.MarshalFieldsV1() != `{"f:spec":{"f:replicas":{}}}` || scaler.Operation != OpUpdate || scaler.Time != 2 {
		t.Errorf("scaler: %+v %s", scaler, scaler.Set.MarshalFieldsV1())
	}
	if creator.Set.Has([]string{"f:spec", "f:replicas"}) || creator.Set.Has([]string{"f:spec", "f:paused"}) || creator.Time != 1 {
		t.Errorf("creator kept a changed or removed field: %s", creator.Set.MarshalFieldsV1())
	}
	if same := m.Update(v2, v2, "noop", "apps/v1", "", 3, nil); len(same) != 2 {
		t.Errorf("an update that changes nothing added an entry")
	}
}

func TestApplyConflictsAndForce(t *testing.T) {
	live := obj(t, `{"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"web","image":"a"}]}}}}`)
	m := Managed(nil).Update(nil, live, "kubectl-client-side-apply", "apps/v1", "", 1, nil)

	_, _, err := Apply(live, obj(t, `{"spec":{"replicas":5}}`), m, "ssa", "apps/v1", "", false, 2, nil)
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("want a conflict, got %v", err)
	}
	if want := `Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas`; err.Error() != want {
		t.Errorf("message\n got %s\nwant %s", err, want)
	}
	// The same value is shared ownership, not a conflict.
	if _, m2, err := Apply(live, obj(t, `{"spec":{"replicas":1}}`), m, "ssa", "apps/v1", "", false, 2, nil); err != nil || len(m2) != 2 {
		t.Fatalf("same value: %v %+v", err, m2)
	}
	out, m3, err := Apply(live, obj(t, `{"spec":{"replicas":5,"template":{"spec":{"containers":[{"name":"web","image":"b"}]}}}}`), m, "ssa", "apps/v1", "", true, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, out, `{"spec":{"replicas":5,"template":{"spec":{"containers":[{"name":"web","image":"b"}]}}}}`)
	if m3[0].Set.Has([]string{"f:spec", "f:replicas"}) || !m3[0].Set.Has([]string{"f:spec", "f:template", "f:spec", "f:containers", `k:{"name":"web"}`, "f:name"}) {
		t.Errorf("forced fields stay with the old owner: %s", m3[0].Set.MarshalFieldsV1())
	}
	if m3[1].Operation != OpApply || !m3[1].Set.Has([]string{"f:spec", "f:replicas"}) {
		t.Errorf("applier: %+v", m3[1])
	}
}

func TestApplyRemovesFieldsNoLongerApplied(t *testing.T) {
	first := obj(t, `{"metadata":{"labels":{"a":"1","b":"2"}},"spec":{"containers":[{"name":"x","image":"i"},{"name":"y","image":"j"}]}}`)
	out, m, err := Apply(nil, first, nil, "me", "v1", "", false, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Someone else adds a label: it survives the next apply.
	before := out
	out = deepCopy(out).(map[string]any)
	out["metadata"].(map[string]any)["labels"].(map[string]any)["c"] = "3"
	m = m.Update(before, out, "other", "v1", "", 2, nil)
	out, m, err = Apply(out, obj(t, `{"metadata":{"labels":{"a":"1"}},"spec":{"containers":[{"name":"x","image":"i"}]}}`), m, "me", "v1", "", false, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, out, `{"metadata":{"labels":{"a":"1","c":"3"}},"spec":{"containers":[{"name":"x","image":"i"}]}}`)
	if len(m) != 2 {
		t.Errorf("entries: %+v", m)
	}
}

func TestConflictMessageManyFields(t *testing.T) {
	err := &ConflictError{Conflicts: []Conflict{
		{Manager: "a", APIVersion: "v1", Path: []string{"f:spec", "f:containers", `k:{"name":"web"}`, "f:image"}},
		{Manager: "a", APIVersion: "v1", Path: []string{"f:spec", "f:replicas"}},
	}}
	want := "Apply failed with 2 conflicts: conflicts with \"a\" using v1:\n- .spec.containers[name=\"web\"].image\n- .spec.replicas"
	if err.Error() != want {
		t.Errorf("got %q", err.Error())
	}
	if !strings.Contains(Conflict{Manager: "m", Subresource: "scale", APIVersion: "apps/v1"}.Describe(), `with subresource "scale"`) {
		t.Error("subresource missing")
	}
}

func TestApplyConflictsWithItsOwnNameThroughAnotherOperation(t *testing.T) {
	live := obj(t, `{"spec":{"replicas":5}}`)
	m := Managed{{Manager: "kubectl", Operation: OpUpdate, APIVersion: "apps/v1", Subresource: "scale", Set: FieldsOf(live, nil)}}
	_, _, err := Apply(live, obj(t, `{"spec":{"replicas":2}}`), m, "kubectl", "apps/v1", "", false, 2, nil)
	want := `Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func TestParseFieldsV1(t *testing.T) {
	s, err := ParseFieldsV1(" {\"f:metadata\": {\"f:labels\": {\"f:a\\/b\": {}}},\n \"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"web\\\"}\":{\".\":{},\"f:image\":{}}}}} ")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][]string{
		{"f:metadata", "f:labels", "f:a/b"},
		{"f:spec", "f:containers", `k:{"name":"web"}`, "."},
		{"f:spec", "f:containers", `k:{"name":"web"}`, "f:image"},
	} {
		if !s.Has(p) {
			t.Errorf("missing %q", p)
		}
	}
	if len(s) != 3 {
		t.Errorf("members: %v", s.Paths())
	}
	for _, bad := range []string{`{"f:a":1}`, `{"f:a":{}`, `{"f:a" {}}`, `[]`, `{"f:a":{}} x`} {
		if _, err := ParseFieldsV1(bad); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
	if s, err := ParseFieldsV1(""); err != nil || len(s) != 0 {
		t.Errorf("empty: %v %v", s, err)
	}
}
