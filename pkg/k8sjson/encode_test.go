package k8sjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	appsv1 "podline.dev/proto/apps/v1"
	coordinationv1 "podline.dev/proto/coordination/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

func TestMarshal(t *testing.T) {
	tests := []struct {
		name string
		in   proto.Message
		want string
	}{{
		name: "an empty message is an empty object",
		in:   &corev1.Pod{},
		want: `{}`,
	}, {
		name: "a nil message is null",
		in:   (*corev1.Pod)(nil),
		want: `null`,
	}, {
		name: "fields in proto order under their JSON names",
		in:   makePod().name("web").namespace("default").container("nginx", "nginx:1.27").obj(),
		want: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"default"},"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}`,
	}, {
		name: "plain scalars are omitted when zero",
		in:   &corev1.ContainerPort{Name: "", HostPort: 0, ContainerPort: 80},
		want: `{"containerPort":80}`,
	}, {
		name: "optional fields are written when set, even to zero",
		in: &corev1.PodSpec{
			TerminationGracePeriodSeconds: proto.Int64(0),
			AutomountServiceAccountToken:  proto.Bool(false),
			Priority:                      proto.Int32(0),
			RuntimeClassName:              proto.String(""),
		},
		want: `{"terminationGracePeriodSeconds":0,"automountServiceAccountToken":false,"priority":0,"runtimeClassName":""}`,
	}, {
		name: "a set empty message is written as {}",
		in:   makePod().emptyDir("cache").obj().Spec,
		want: `{"volumes":[{"name":"cache","emptyDir":{}}]}`,
	}, {
		name: "empty lists and maps are omitted",
		in:   &corev1.Container{Name: "c", Args: []string{}, Resources: &corev1.ResourceRequirements{Limits: map[string]string{}}},
		want: `{"name":"c","resources":{}}`,
	}, {
		name: "map keys are sorted",
		in:   makePod().label("tier", "web").label("app", "shop").label("Z", "1").obj().Metadata,
		want: `{"labels":{"Z":"1","app":"shop","tier":"web"}}`,
	}, {
		name: "int64 is a number, exact beyond 2^53",
		in:   &metav1.ObjectMeta{Generation: 9007199254740993, DeletionGracePeriodSeconds: proto.Int64(-9223372036854775808)},
		want: `{"generation":9007199254740993,"deletionGracePeriodSeconds":-9223372036854775808}`,
	}, {
		name: "acronym JSON names",
		in:   &corev1.PodStatus{HostIp: "10.0.0.1", PodIp: "10.244.0.5", PodIps: []*corev1.PodIP{{Ip: "10.244.0.5"}}},
		want: `{"hostIP":"10.0.0.1","podIP":"10.244.0.5","podIPs":[{"ip":"10.244.0.5"}]}`,
	}, {
		name: "Time is RFC 3339 in UTC, seconds",
		in:   &metav1.ObjectMeta{CreationTimestamp: &metav1.Time{Seconds: 1796032800}},
		want: `{"creationTimestamp":"2026-11-30T10:00:00Z"}`,
	}, {
		name: "Time at the epoch is still a time",
		in:   &metav1.ObjectMeta{CreationTimestamp: &metav1.Time{}},
		want: `{"creationTimestamp":"1970-01-01T00:00:00Z"}`,
	}, {
		name: "MicroTime has six fractional digits",
		in: &coordinationv1.LeaseSpec{
			AcquireTime: &metav1.MicroTime{Seconds: 1796032800, Nanos: 412380999},
			RenewTime:   &metav1.MicroTime{Seconds: 1796032800},
		},
		want: `{"acquireTime":"2026-11-30T10:00:00.412380Z","renewTime":"2026-11-30T10:00:00.000000Z"}`,
	}, {
		name: "IntOrString is a number or a string",
		in:   makeDeployment().rollingUpdate(intOrInt(0), intOrString("25%")).obj().Spec.Strategy,
		want: `{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":0,"maxSurge":"25%"}}`,
	}, {
		name: "Duration is Go's duration string",
		in:   &metav1.Duration{Nanos: int64(90 * time.Second)},
		want: `"1m30s"`,
	}, {
		name: "bytes are standard base64",
		in:   &corev1.Secret{Data: map[string][]byte{"b": {0xff, 0xfe}, "a": []byte("admin")}},
		want: `{"data":{"a":"YWRtaW4=","b":"//4="}}`,
	}, {
		name: "strings are escaped as encoding/json does",
		in:   &metav1.ObjectMeta{Annotations: map[string]string{"a": "<b>&\"\\\n\t\u2028\x01"}},
		want: `{"annotations":{"a":"\u003cb\u003e\u0026\"\\\n\t\u2028\u0001"}}`,
	}, {
		name: "the items of a List are written even when empty",
		in:   &corev1.PodList{ApiVersion: "v1", Kind: "PodList", Metadata: &metav1.ListMeta{ResourceVersion: "42"}},
		want: `{"apiVersion":"v1","kind":"PodList","metadata":{"resourceVersion":"42"},"items":[]}`,
	}, {
		name: "a watch event is Kubernetes' watch frame",
		in:   &corev1.PodWatchEvent{Type: "ADDED", Object: makePod().name("web").obj()},
		want: `{"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{}}}`,
	}, {
		name: "fieldsV1 is written as the JSON it holds",
		in:   &metav1.ManagedFieldsEntry{Manager: "kubectl", FieldsType: "FieldsV1", FieldsV1: `{"f:metadata": {"f:labels": {}}}`},
		want: `{"manager":"kubectl","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{}}}}`,
	}, {
		name: "quantities are strings",
		in:   makePod().container("c", "i").requests("cpu", "500m", "memory", "64Mi").obj().Spec.Containers[0].Resources,
		want: `{"requests":{"cpu":"500m","memory":"64Mi"}}`,
	}, {
		name: "a Status",
		in: &metav1.Status{ApiVersion: "v1", Kind: "Status", Metadata: &metav1.ListMeta{}, Status: "Failure",
			Message: `Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`,
			Reason:  "Invalid", Code: 422,
			Details: &metav1.StatusDetails{Name: "web", Group: "apps", Kind: "Deployment",
				Causes: []*metav1.StatusCause{{Reason: "FieldValueInvalid", Message: "Invalid value: -1", Field: "spec.replicas"}}}},
		want: `{"apiVersion":"v1","kind":"Status","metadata":{},"status":"Failure","message":"Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0","reason":"Invalid","details":{"name":"web","group":"apps","kind":"Deployment","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: -1","field":"spec.replicas"}]},"code":422}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Marshal(tt.in)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("Marshal\n got %s\nwant %s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("output is not valid JSON")
			}
		})
	}
}

func TestMarshalErrors(t *testing.T) {
	tests := []struct {
		name string
		in   proto.Message
		want string
	}{{
		name: "an IntOrString of an unknown type",
		in:   makeDeployment().rollingUpdate(&metav1.IntOrString{Type: 7}, nil).obj(),
		want: "k8sjson: cannot marshal spec.strategy.rollingUpdate.maxUnavailable: impossible IntOrString.Type 7",
	}, {
		name: "a time beyond year 9999",
		in:   &corev1.PodList{Items: []*corev1.Pod{makePod().created(1 << 40).obj()}},
		want: "k8sjson: cannot marshal items[0].metadata.creationTimestamp: time 1099511627776: year outside of range [0,9999]",
	}, {
		name: "fieldsV1 that is not JSON",
		in:   &metav1.ObjectMeta{ManagedFields: []*metav1.ManagedFieldsEntry{{FieldsV1: `{"f:a":`}}},
		want: "k8sjson: cannot marshal managedFields[0].fieldsV1: field holds invalid JSON: unexpected end of JSON input (offset 7)",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Marshal(tt.in)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Marshal error\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

// TestAppendStringMatchesEncodingJSON: strings are written byte for byte as
// encoding/json writes them, which is what Kubernetes sends.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	var all strings.Builder
	for c := range 0x80 {
		all.WriteByte(byte(c))
	}
	for _, s := range []string{
		"", "plain", all.String(), "ünïcödé ✓ 😀", "\u2028\u2029", "bad \xff\xfe utf8", "\xc3", "a\x00b",
		`{"json":"inside"}`, "<script>&amp;</script>",
	} {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("appendString(%q)\n got %s\nwant %s", s, got, want)
		}
	}
}

func TestMarshalIndent(t *testing.T) {
	got, err := MarshalIndent(makePod().name("web").obj(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Pod\",\n  \"metadata\": {\n    \"name\": \"web\"\n  },\n  \"spec\": {}\n}"
	if string(got) != want {
		t.Errorf("MarshalIndent\n got %s\nwant %s", got, want)
	}
}

func TestEncoderWritesOneDocumentPerLine(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	for _, typ := range []string{"ADDED", "MODIFIED"} {
		ev := &corev1.PodWatchEvent{Type: typ, Object: makePod().name("web").node("node-1").obj()}
		if err := enc.Encode(ev); err != nil {
			t.Fatal(err)
		}
	}
	want := `{"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"nodeName":"node-1"}}}` + "\n" +
		`{"type":"MODIFIED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"nodeName":"node-1"}}}` + "\n"
	if buf.String() != want {
		t.Errorf("Encoder wrote\n%s\nwant\n%s", buf.String(), want)
	}

	buf.Reset()
	enc.SetIndent("", " ")
	if err := enc.Encode(&metav1.ListMeta{ResourceVersion: "7"}); err != nil {
		t.Fatal(err)
	}
	if want := "{\n \"resourceVersion\": \"7\"\n}\n"; buf.String() != want {
		t.Errorf("indented Encoder wrote %q, want %q", buf.String(), want)
	}
}

func TestMarshalAppendReusesBuffer(t *testing.T) {
	buf := make([]byte, 0, 4096)
	out, err := MarshalAppend(append(buf, "x="...), &appsv1.DeploymentSpec{Replicas: proto.Int32(3)})
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `x={"replicas":3}` {
		t.Errorf("MarshalAppend = %s", out)
	}
	if &out[0] != &buf[:1][0] {
		t.Errorf("MarshalAppend did not append in place")
	}
}
