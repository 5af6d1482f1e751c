package k8sjson

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"
	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	metav1 "podline.dev/proto/meta/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
)

// marshalBothWays writes m with the wire walk and with the protoreflect
// walk; the two must agree byte for byte.
func marshalBothWays(t testing.TB, m proto.Message) (wire, reflected []byte) {
	t.Helper()
	e := getEncoder()
	fallbacks := wireFallbacks.Load()
	err := e.marshal(m)
	if wireFallbacks.Load() != fallbacks {
		t.Errorf("the wire walk fell back to reflection for %v", m)
	}
	if err != nil {
		t.Fatalf("Marshal (wire): %v", err)
	}
	wire = bytes.Clone(e.buf)
	putEncoder(e)

	e = getEncoder()
	e.noWire = true
	if err := e.marshal(m); err != nil {
		t.Fatalf("Marshal (protoreflect): %v", err)
	}
	reflected = bytes.Clone(e.buf)
	putEncoder(e)
	return wire, reflected
}

func TestWireWalkMatchesReflection(t *testing.T) {
	var msgs []proto.Message
	inputs, _ := filepath.Glob("testdata/*.json")
	for _, in := range inputs {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		apiVersion, kind, _ := TypeMeta(data)
		m := newObject(t, apiVersion, kind)
		if _, err := Unmarshal(data, m); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		msgs = append(msgs, m)
	}
	msgs = append(msgs,
		&corev1.PodSecurityContext{SupplementalGroups: []int64{1000, -1, 0, 1 << 40}, RunAsUser: proto.Int64(0)},
		&corev1.PodList{Metadata: &metav1.ListMeta{RemainingItemCount: proto.Int64(0)}},
		&corev1.PodList{Items: []*corev1.Pod{{}, makePod().name("a").obj()}},
		&corev1.ConfigMap{Data: map[string]string{"b": "2", "a": "1", "": "empty key"}, BinaryData: map[string][]byte{"z": nil, "y": {1}}},
		&metav1.Duration{Nanos: 1500},
		&metav1.IntOrString{},
		&metav1.ManagedFieldsEntry{FieldsV1: ` [1, {"a" : "\u00e9<"}] `},
		&discoveryv1.EndpointSlice{AddressType: "IPv4", Endpoints: []*discoveryv1.Endpoint{{Addresses: []string{"10.244.1.2"},
			Conditions: &discoveryv1.EndpointConditions{Ready: proto.Bool(true), Serving: proto.Bool(true), Terminating: proto.Bool(false)}}}},
		&rbacv1.ClusterRole{Rules: []*rbacv1.PolicyRule{{Verbs: []string{"get", "list", "watch"}, NonResourceUrls: []string{"/healthz"}}}},
	)
	for _, m := range msgs {
		name := string(m.ProtoReflect().Descriptor().Name())
		t.Run(name, func(t *testing.T) {
			wire, reflected := marshalBothWays(t, m)
			if !bytes.Equal(wire, reflected) {
				t.Errorf("the walks disagree\nwire:       %s\nreflection: %s", wire, reflected)
			}
		})
	}
}

func TestWireWalkFallsBackForInvalidUTF8(t *testing.T) {
	// proto.Marshal refuses a proto3 string that is not UTF-8; the
	// protoreflect walk writes it as encoding/json would.
	fallbacks := wireFallbacks.Load()
	got, err := Marshal(&corev1.Container{Name: "a\xffb"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"a\ufffdb"}`; string(got) != want {
		t.Errorf("Marshal = %s, want %s", got, want)
	}
	if wireFallbacks.Load() == fallbacks {
		t.Errorf("expected a fallback to the protoreflect walk")
	}
}

func TestWireWalkRefusesWhatProtoMarshalWouldNotWrite(t *testing.T) {
	mi := infoOf((&corev1.ContainerPort{}).ProtoReflect().Descriptor())
	tests := []struct {
		name string
		wire []byte
	}{
		{"fields out of order", protoBytes(3, 80, 2, 8080)},
		{"a scalar twice", protoBytes(3, 80, 3, 81)},
		{"a wrong wire type", []byte{3<<3 | 5, 0, 0, 0, 0}},
		{"truncated", []byte{3 << 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := getEncoder()
			defer putEncoder(e)
			if err := e.wireMessage(tt.wire, mi); err != errWire {
				t.Errorf("wireMessage = %v, want errWire", err)
			}
		})
	}
}

// protoBytes encodes varint fields: number, value, number, value...
func protoBytes(kv ...uint64) []byte {
	var b []byte
	for i := 0; i+1 < len(kv); i += 2 {
		b = append(b, byte(kv[i]<<3))
		for v := kv[i+1]; ; v >>= 7 {
			if v < 0x80 {
				b = append(b, byte(v))
				break
			}
			b = append(b, byte(v)|0x80)
		}
	}
	return b
}
