package k8sjson

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	appsv1 "podline.dev/proto/apps/v1"
	coordinationv1 "podline.dev/proto/coordination/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// newObject returns an empty message for an apiVersion and kind, as the
// apiserver's scheme would.
func newObject(t testing.TB, apiVersion, kind string) proto.Message {
	t.Helper()
	switch apiVersion + "/" + kind {
	case "v1/Pod":
		return &corev1.Pod{}
	case "v1/Service":
		return &corev1.Service{}
	case "v1/Secret":
		return &corev1.Secret{}
	case "v1/Status":
		return &metav1.Status{}
	case "apps/v1/Deployment":
		return &appsv1.Deployment{}
	case "coordination.k8s.io/v1/Lease":
		return &coordinationv1.Lease{}
	}
	t.Fatalf("no type for %s %s", apiVersion, kind)
	return nil
}

// TestGolden decodes bodies as kubectl sends them (create, apply, replace of
// a `get -o json`) in Strict mode, and checks the re-encoding against
// testdata/NAME.golden (indented) and its compact form against Marshal.
// Run with -update to rewrite the golden files.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*.json")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			apiVersion, kind, err := TypeMeta(data)
			if err != nil {
				t.Fatalf("TypeMeta: %v", err)
			}
			obj := newObject(t, apiVersion, kind)
			warnings, err := Unmarshal(data, obj)
			if err != nil || len(warnings) > 0 {
				t.Fatalf("Unmarshal in Strict mode: warnings %q, error %v", warnings, err)
			}
			indented, err := MarshalIndent(obj, "", "    ")
			if err != nil {
				t.Fatalf("MarshalIndent: %v", err)
			}
			indented = append(indented, '\n')
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, indented, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(indented, want) {
				t.Errorf("re-encoding differs from %s (run with -update to accept):\n%s", golden, indented)
			}
			compact, err := Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			var wantCompact bytes.Buffer
			if err := json.Compact(&wantCompact, want); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(compact, wantCompact.Bytes()) {
				t.Errorf("Marshal differs from compacted golden:\n got %s\nwant %s", compact, wantCompact.Bytes())
			}
			again := newObject(t, apiVersion, kind)
			if _, err := Unmarshal(want, again); err != nil {
				t.Fatalf("golden does not decode: %v", err)
			}
			if !proto.Equal(obj, again) {
				t.Errorf("golden decodes to a different message")
			}
		})
	}
}
