package k8sjson

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"
	corev1 "podline.dev/proto/core/v1"
)

// FuzzRoundTrip: whatever Unmarshal accepts as a Pod, Marshal writes, and
// that output decodes strictly to an equal Pod and re-encodes to the same
// bytes.
func FuzzRoundTrip(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/pod-*.json")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`{}`, `null`, `{"metadata":{"creationTimestamp":"2026-11-30T10:00:00.5+01:00","labels":{"a":"b","a":"c"}}}`,
		`{"spec":{"containers":[{"resources":{"limits":{"cpu":1e3}},"livenessProbe":{"httpGet":{"port":"http"}}}]}}`,
		`{"metadata":{"managedFields":[{"fieldsV1":{"f:a":[1,"\u00e9",null]}}]}}`,
		`{"spec":{"volumes":[{"emptyDir":{}}],"priority":0,"nodeSelector":{"k":null}}}`,
		"{\"metadata\":{\"name\":\"\\ud800\xff\"}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pod := &corev1.Pod{}
		if _, err := Unmarshal(data, pod, Ignore); err != nil {
			return
		}
		out, err := Marshal(pod)
		if err != nil {
			t.Fatalf("Marshal of a decoded Pod failed: %v\ninput: %q", err, data)
		}
		again := &corev1.Pod{}
		if warnings, err := Unmarshal(out, again, Strict); err != nil || warnings != nil {
			t.Fatalf("Unmarshal of Marshal output: %q, %v\noutput: %s", warnings, err, out)
		}
		if !proto.Equal(pod, again) {
			t.Fatalf("round trip changed the Pod\ninput:  %q\noutput: %s\nfirst:  %v\nsecond: %v", data, out, pod, again)
		}
		out2, err := Marshal(again)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("re-encoding differs: %v\n%s\n%s", err, out, out2)
		}
		if wire, reflected := marshalBothWays(t, pod); !bytes.Equal(wire, reflected) {
			t.Fatalf("the walks disagree\nwire:       %s\nreflection: %s", wire, reflected)
		}
	})
}
