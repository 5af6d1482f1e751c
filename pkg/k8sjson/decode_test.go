package k8sjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	appsv1 "podline.dev/proto/apps/v1"
	coordinationv1 "podline.dev/proto/coordination/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

func TestUnmarshal(t *testing.T) {
	tests := []struct {
		name string
		in   string
		into proto.Message
		want proto.Message
	}{{
		name: "fields by their JSON names",
		in:   `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"default"},"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}`,
		into: &corev1.Pod{},
		want: makePod().name("web").namespace("default").container("nginx", "nginx:1.27").obj(),
	}, {
		name: "null means unset, for every kind of field",
		in:   `{"metadata":{"creationTimestamp":null,"labels":null,"finalizers":null,"deletionGracePeriodSeconds":null,"name":null}}`,
		into: &corev1.Pod{},
		want: &corev1.Pod{Metadata: &metav1.ObjectMeta{}},
	}, {
		name: "an empty object sets the message",
		in:   `{"volumes":[{"name":"cache","emptyDir":{}}],"securityContext":{}}`,
		into: &corev1.PodSpec{},
		want: &corev1.PodSpec{Volumes: []*corev1.Volume{{Name: "cache", EmptyDir: &corev1.EmptyDirVolumeSource{}}}, SecurityContext: &corev1.PodSecurityContext{}},
	}, {
		name: "optional fields are set by zero values",
		in:   `{"replicas":0,"paused":false}`,
		into: &appsv1.DeploymentSpec{},
		want: &appsv1.DeploymentSpec{Replicas: proto.Int32(0)},
	}, {
		name: "int64 is exact to its limits",
		in:   `{"generation":9223372036854775807,"deletionGracePeriodSeconds":-9223372036854775808}`,
		into: &metav1.ObjectMeta{},
		want: &metav1.ObjectMeta{Generation: 9223372036854775807, DeletionGracePeriodSeconds: proto.Int64(-9223372036854775808)},
	}, {
		name: "Time drops fractional seconds and converts to UTC",
		in:   `{"creationTimestamp":"2026-11-30T12:00:00.999+02:00"}`,
		into: &metav1.ObjectMeta{},
		want: &metav1.ObjectMeta{CreationTimestamp: &metav1.Time{Seconds: 1796032800}},
	}, {
		name: "MicroTime keeps microseconds",
		in:   `{"acquireTime":"2026-11-30T10:00:00.412380999Z","renewTime":"2026-11-30T10:00:00Z"}`,
		into: &coordinationv1.LeaseSpec{},
		want: &coordinationv1.LeaseSpec{AcquireTime: &metav1.MicroTime{Seconds: 1796032800, Nanos: 412380000}, RenewTime: &metav1.MicroTime{Seconds: 1796032800}},
	}, {
		name: "IntOrString takes a number or a string",
		in:   `{"maxUnavailable":1,"maxSurge":"25%"}`,
		into: &appsv1.RollingUpdateDeployment{},
		want: &appsv1.RollingUpdateDeployment{MaxUnavailable: intOrInt(1), MaxSurge: intOrString("25%")},
	}, {
		name: "a quantity may be a number",
		in:   `{"limits":{"cpu":1,"memory":"128Mi"},"requests":{"cpu":0.5,"ephemeral-storage":2e9}}`,
		into: &corev1.ResourceRequirements{},
		want: &corev1.ResourceRequirements{Limits: map[string]string{"cpu": "1", "memory": "128Mi"}, Requests: map[string]string{"cpu": "0.5", "ephemeral-storage": "2e9"}},
	}, {
		name: "bytes are base64",
		in:   `{"data":{"username":"YWRtaW4=","empty":""}}`,
		into: &corev1.Secret{},
		want: &corev1.Secret{Data: map[string][]byte{"username": []byte("admin"), "empty": {}}},
	}, {
		name: "fieldsV1 keeps its JSON, compacted",
		in:   `{"manager":"kubectl","fieldsV1": { "f:metadata" : { "f:labels" : {"\u0066:app": {}} } }}`,
		into: &metav1.ManagedFieldsEntry{},
		want: &metav1.ManagedFieldsEntry{Manager: "kubectl", FieldsV1: `{"f:metadata":{"f:labels":{"f:app":{}}}}`},
	}, {
		name: "escapes, surrogate pairs and invalid UTF-8 as encoding/json reads them",
		in:   "{\"annotations\":{\"a\":\"\\u003cb\\u003e\\t\\ud83d\\ude00 \\ud800 \xff\",\"\\u006b\":\"v\"}}",
		into: &metav1.ObjectMeta{},
		want: &metav1.ObjectMeta{Annotations: map[string]string{"a": "<b>\t😀 \ufffd \ufffd", "k": "v"}},
	}, {
		name: "null list elements and map values are zero values",
		in:   `{"finalizers":["a",null],"labels":{"x":null},"ownerReferences":[null]}`,
		into: &metav1.ObjectMeta{},
		want: &metav1.ObjectMeta{Finalizers: []string{"a", ""}, Labels: map[string]string{"x": ""}, OwnerReferences: []*metav1.OwnerReference{{}}},
	}, {
		name: "a top-level null leaves the message empty",
		in:   ` null `,
		into: &corev1.Pod{},
		want: &corev1.Pod{},
	}, {
		name: "the items of a List",
		in:   `{"apiVersion":"v1","kind":"PodList","metadata":{"resourceVersion":"42"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`,
		into: &corev1.PodList{},
		want: &corev1.PodList{ApiVersion: "v1", Kind: "PodList", Metadata: &metav1.ListMeta{ResourceVersion: "42"},
			Items: []*corev1.Pod{{Metadata: &metav1.ObjectMeta{Name: "a"}}, {Metadata: &metav1.ObjectMeta{Name: "b"}}}},
	}, {
		name: "the message is reset first",
		in:   `{"kind":"Pod"}`,
		into: makePod().name("old").obj(),
		want: &corev1.Pod{Kind: "Pod"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			warnings, err := Unmarshal([]byte(tt.in), tt.into)
			if err != nil || warnings != nil {
				t.Fatalf("Unmarshal: warnings %q, error %v", warnings, err)
			}
			if !proto.Equal(tt.into, tt.want) {
				t.Errorf("Unmarshal\n got %v\nwant %v", tt.into, tt.want)
			}
		})
	}
}

func TestUnmarshalErrors(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		into   proto.Message
		path   string
		reason Reason
		msg    string
	}{{
		name:   "a string for an int32",
		in:     `{"spec":{"replicas":"3"}}`,
		into:   &appsv1.Deployment{},
		path:   "spec.replicas",
		reason: ReasonTypeInvalid,
		msg:    "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
	}, {
		name:   "deep in lists",
		in:     `{"spec":{"template":{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80},{"containerPort":"http"}]}]}}}}`,
		into:   &appsv1.Deployment{},
		path:   "spec.template.spec.containers[0].ports[1].containerPort",
		reason: ReasonTypeInvalid,
		msg:    "json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32",
	}, {
		name:   "an int32 out of range",
		in:     `{"spec":{"replicas":2147483648}}`,
		into:   &appsv1.Deployment{},
		path:   "spec.replicas",
		reason: ReasonTypeInvalid,
		msg:    "json: cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32",
	}, {
		name:   "an int64 out of range",
		in:     `{"generation":9223372036854775808}`,
		into:   &metav1.ObjectMeta{},
		path:   "generation",
		reason: ReasonTypeInvalid,
		msg:    "json: cannot unmarshal number 9223372036854775808 into Go struct field ObjectMeta.generation of type int64",
	}, {
		name:   "a fraction for an integer",
		in:     `{"terminationGracePeriodSeconds":1.5}`,
		into:   &corev1.PodSpec{},
		path:   "terminationGracePeriodSeconds",
		reason: ReasonTypeInvalid,
		msg:    "json: cannot unmarshal number 1.5 into Go struct field PodSpec.terminationGracePeriodSeconds of type int64",
	}, {
		name:   "a number for a map value",
		in:     `{"spec":{"nodeSelector":{"disk":1}}}`,
		into:   &corev1.Pod{},
		path:   "spec.nodeSelector.disk",
		reason: ReasonTypeInvalid,
		msg:    "json: cannot unmarshal number into Go struct field PodSpec.spec.nodeSelector of type string",
	}, {
		name:   "an object for a list",
		in:     `{"containers":{"name":"a"}}`,
		into:   &corev1.PodSpec{},
		path:   "containers",
		reason: ReasonTypeInvalid,
		msg:    "json: cannot unmarshal object into Go struct field PodSpec.containers of type []v1.Container",
	}, {
		name:   "a string for a list element",
		in:     `{"containers":["nginx"]}`,
		into:   &corev1.PodSpec{},
		path:   "containers[0]",
		reason: ReasonTypeInvalid,
		msg:    "json: cannot unmarshal string into Go struct field PodSpec.containers of type v1.Container",
	}, {
		name:   "a bool for a quantity",
		in:     `{"requests":{"cpu":true}}`,
		into:   &corev1.ResourceRequirements{},
		path:   "requests.cpu",
		reason: ReasonTypeInvalid,
		msg:    "json: cannot unmarshal bool into Go struct field ResourceRequirements.requests of type resource.Quantity",
	}, {
		name:   "a number for a string",
		in:     `{"image":5}`,
		into:   &corev1.Container{},
		path:   "image",
		reason: ReasonTypeInvalid,
		msg:    "json: cannot unmarshal number into Go struct field Container.image of type string",
	}, {
		name:   "an object for an IntOrString",
		in:     `{"port":{"intVal":80}}`,
		into:   &corev1.ServicePort{},
		path:   "port",
		reason: ReasonTypeInvalid,
		msg:    "json: cannot unmarshal object into Go struct field ServicePort.port of type int32",
	}, {
		name:   "a fraction for an IntOrString",
		in:     `{"targetPort":80.5}`,
		into:   &corev1.ServicePort{},
		path:   "targetPort",
		reason: ReasonTypeInvalid,
		msg:    "json: cannot unmarshal number 80.5 into Go struct field ServicePort.targetPort of type intstr.IntOrString",
	}, {
		name:   "an array at the top",
		in:     `[]`,
		into:   &corev1.Pod{},
		path:   "",
		reason: ReasonTypeInvalid,
		msg:    "json: cannot unmarshal array into Go value of type v1.Pod",
	}, {
		name:   "a time that is not RFC 3339",
		in:     `{"metadata":{"creationTimestamp":"yesterday"}}`,
		into:   &corev1.Pod{},
		path:   "metadata.creationTimestamp",
		reason: ReasonValueInvalid,
		msg:    `metadata.creationTimestamp: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`,
	}, {
		name:   "a number for a time",
		in:     `{"creationTimestamp":0}`,
		into:   &metav1.ObjectMeta{},
		path:   "creationTimestamp",
		reason: ReasonTypeInvalid,
		msg:    "json: cannot unmarshal number into Go struct field ObjectMeta.creationTimestamp of type v1.Time",
	}, {
		name:   "bad base64",
		in:     `{"data":{"password":"not base64!"}}`,
		into:   &corev1.Secret{},
		path:   "data.password",
		reason: ReasonValueInvalid,
		msg:    "data.password: illegal base64 data at input byte 3",
	}, {
		name:   "a syntax error",
		in:     `{"metadata":{"name":"web",}}`,
		into:   &corev1.Pod{},
		path:   "metadata",
		reason: ReasonMalformed,
		msg:    "invalid character '}' looking for beginning of object key string (offset 27)",
	}, {
		name:   "a syntax error later wins over a type error, as encoding/json checks first",
		in:     `{"spec":{"replicas":"3"},"status":{`,
		into:   &appsv1.Deployment{},
		path:   "",
		reason: ReasonMalformed,
		msg:    "unexpected end of JSON input (offset 35)",
	}, {
		name:   "truncated input",
		in:     `{"metadata":{"name":"we`,
		into:   &corev1.Pod{},
		path:   "metadata.name",
		reason: ReasonMalformed,
		msg:    "unexpected end of JSON input (offset 23)",
	}, {
		name:   "a second document",
		in:     `{} {}`,
		into:   &corev1.Pod{},
		path:   "",
		reason: ReasonMalformed,
		msg:    "invalid character '{' after top-level value (offset 4)",
	}, {
		name:   "a malformed literal",
		in:     `{"hostNetwork":tru}`,
		into:   &corev1.PodSpec{},
		path:   "hostNetwork",
		reason: ReasonMalformed,
		msg:    "invalid character '}' in literal true (expecting 'e') (offset 19)",
	}, {
		name:   "a control character in a string",
		in:     "{\"name\":\"a\nb\"}",
		into:   &corev1.Container{},
		path:   "name",
		reason: ReasonMalformed,
		msg:    `invalid character '\n' in string literal (offset 11)`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Unmarshal([]byte(tt.in), tt.into)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Unmarshal error = %v (%T), want a *FieldError", err, err)
			}
			if fe.Path != tt.path || fe.Reason != tt.reason || fe.Error() != tt.msg {
				t.Errorf("Unmarshal error\n got path %q reason %s: %s\nwant path %q reason %s: %s",
					fe.Path, fe.Reason, fe.Error(), tt.path, tt.reason, tt.msg)
			}
		})
	}
}

const withUnknownFields = `{
	"apiVersion": "v1", "kind": "Pod",
	"metadata": {"name": "web", "labels": {"app": "web"}},
	"spec": {
		"containers": [{"name": "nginx", "imagee": "nginx:1.27", "ports": [{"containerPort": 80, "hostPorts": [1]}]}],
		"restartPolicyy": "Always"
	},
	"extra": {"deep": [1, {"x": null}]}
}`

func TestUnknownFields(t *testing.T) {
	want := makePod().name("web").label("app", "web").container("nginx", "").obj()
	want.Spec.Containers[0].Ports = []*corev1.ContainerPort{{ContainerPort: 80}}
	unknown := []string{
		`unknown field "spec.containers[0].imagee"`,
		`unknown field "spec.containers[0].ports[0].hostPorts"`,
		`unknown field "spec.restartPolicyy"`,
		`unknown field "extra"`,
	}

	t.Run("Strict reports every unknown field with its path", func(t *testing.T) {
		pod := &corev1.Pod{}
		warnings, err := Unmarshal([]byte(withUnknownFields), pod, Strict)
		var se *StrictError
		if !errors.As(err, &se) || warnings != nil {
			t.Fatalf("Unmarshal = %q, %v; want a *StrictError", warnings, err)
		}
		var got []string
		for _, fe := range se.Errors {
			if fe.Reason != ReasonUnknown {
				t.Errorf("%s: reason %s, want %s", fe.Path, fe.Reason, ReasonUnknown)
			}
			got = append(got, fe.Message)
		}
		if !slices.Equal(got, unknown) {
			t.Errorf("strict errors\n got %q\nwant %q", got, unknown)
		}
		if se.Errors[0].Path != "spec.containers[0].imagee" {
			t.Errorf("first path = %q", se.Errors[0].Path)
		}
		wantMsg := `strict decoding error: unknown field "spec.containers[0].imagee", unknown field "spec.containers[0].ports[0].hostPorts", unknown field "spec.restartPolicyy", unknown field "extra"`
		if err.Error() != wantMsg {
			t.Errorf("error\n got %s\nwant %s", err, wantMsg)
		}
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Path != "spec.containers[0].imagee" {
			t.Errorf("errors.As(*FieldError) = %v", fe)
		}
		if !proto.Equal(pod, want) {
			t.Errorf("the known fields are still decoded:\n got %v\nwant %v", pod, want)
		}
	})
	t.Run("Strict is the default", func(t *testing.T) {
		_, err := Unmarshal([]byte(withUnknownFields), &corev1.Pod{})
		if len(FieldErrors(err)) != len(unknown) {
			t.Errorf("Unmarshal without options = %v", err)
		}
	})
	t.Run("Warn drops them with a warning each", func(t *testing.T) {
		pod := &corev1.Pod{}
		warnings, err := Unmarshal([]byte(withUnknownFields), pod, Warn)
		if err != nil || !slices.Equal(warnings, unknown) {
			t.Errorf("Unmarshal = %q, %v; want %q", warnings, err, unknown)
		}
		if !proto.Equal(pod, want) {
			t.Errorf("got %v, want %v", pod, want)
		}
	})
	t.Run("Ignore drops them silently", func(t *testing.T) {
		pod := &corev1.Pod{}
		warnings, err := Unmarshal([]byte(withUnknownFields), pod, Ignore)
		if err != nil || warnings != nil {
			t.Errorf("Unmarshal = %q, %v", warnings, err)
		}
		if !proto.Equal(pod, want) {
			t.Errorf("got %v, want %v", pod, want)
		}
	})
	t.Run("a proto field name is not a JSON name", func(t *testing.T) {
		_, err := Unmarshal([]byte(`{"metadata":{"resource_version":"1","ResourceVersion":"2"}}`), &corev1.Pod{})
		got := FieldErrors(err)
		if len(got) != 2 || got[0].Path != "metadata.resource_version" || got[1].Path != "metadata.ResourceVersion" {
			t.Errorf("Unmarshal = %v", err)
		}
	})
	t.Run("a type error is still an error in Warn mode", func(t *testing.T) {
		warnings, err := Unmarshal([]byte(`{"foo":1,"spec":{"replicas":"3"}}`), &appsv1.Deployment{}, Warn)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Path != "spec.replicas" || !slices.Equal(warnings, []string{`unknown field "foo"`}) {
			t.Errorf("Unmarshal = %q, %v", warnings, err)
		}
	})
}

func TestDuplicateFields(t *testing.T) {
	in := `{"metadata":{"name":"a","labels":{"app":"x","app":"y"},"name":"b"},"spec":{"containers":[{"name":"c1"}],"containers":[{"name":"c2"}]}}`
	want := makePod().name("b").label("app", "y").container("c2", "").obj()
	want.ApiVersion, want.Kind = "", ""
	dups := []string{`duplicate field "metadata.labels.app"`, `duplicate field "metadata.name"`, `duplicate field "spec.containers"`}

	t.Run("Strict reports them", func(t *testing.T) {
		_, err := Unmarshal([]byte(in), &corev1.Pod{})
		var got []string
		for _, fe := range FieldErrors(err) {
			if fe.Reason != ReasonDuplicate {
				t.Errorf("%s: reason %s", fe.Path, fe.Reason)
			}
			got = append(got, fe.Message)
		}
		if !slices.Equal(got, dups) {
			t.Errorf("Unmarshal errors\n got %q\nwant %q", got, dups)
		}
	})
	t.Run("Warn keeps the last with a warning", func(t *testing.T) {
		pod := &corev1.Pod{}
		warnings, err := Unmarshal([]byte(in), pod, Warn)
		if err != nil || !slices.Equal(warnings, dups) {
			t.Errorf("Unmarshal = %q, %v", warnings, err)
		}
		if !proto.Equal(pod, want) {
			t.Errorf("got %v, want %v", pod, want)
		}
	})
	t.Run("Ignore keeps the last", func(t *testing.T) {
		pod := &corev1.Pod{}
		if warnings, err := Unmarshal([]byte(in), pod, Ignore); err != nil || warnings != nil {
			t.Errorf("Unmarshal = %q, %v", warnings, err)
		}
		if !proto.Equal(pod, want) {
			t.Errorf("got %v, want %v", pod, want)
		}
	})
	t.Run("a repeated object merges, as encoding/json does", func(t *testing.T) {
		d := &appsv1.DeploymentSpec{}
		if _, err := Unmarshal([]byte(`{"strategy":{"type":"Recreate"},"strategy":{"rollingUpdate":{}}}`), d, Ignore); err != nil {
			t.Fatal(err)
		}
		want := &appsv1.DeploymentSpec{Strategy: &appsv1.DeploymentStrategy{Type: "Recreate", RollingUpdate: &appsv1.RollingUpdateDeployment{}}}
		if !proto.Equal(d, want) {
			t.Errorf("got %v, want %v", d, want)
		}
	})
}

func TestTypeMeta(t *testing.T) {
	tests := []struct {
		name             string
		in               string
		apiVersion, kind string
		err              string
	}{
		{name: "both", in: `{"kind":"Deployment","apiVersion":"apps/v1","spec":{"replicas":3}}`, apiVersion: "apps/v1", kind: "Deployment"},
		{name: "after a large body", in: `{"metadata":{"labels":{"a":"b"}},"items":[[],{}],"apiVersion":"v1","kind":"PodList"}`, apiVersion: "v1", kind: "PodList"},
		{name: "missing", in: `{"metadata":{}}`},
		{name: "null", in: `{"kind":null}`},
		{name: "an escaped key", in: `{"\u006bind":"Pod"}`, kind: "Pod"},
		{name: "case matters", in: `{"Kind":"Pod","apiversion":"v1"}`},
		{name: "malformed", in: `{"kind":"Pod",}`, err: "invalid character '}' looking for beginning of object key string (offset 15)"},
		{name: "malformed after kind", in: `{"kind":"Pod","spec":[}`, err: "invalid character '}' looking for beginning of value (offset 23)"},
		{name: "not an object", in: `["Pod"]`, err: "json: cannot unmarshal array into Go value of type TypeMeta"},
		{name: "a number for kind", in: `{"kind":1}`, err: "json: cannot unmarshal number into Go struct field TypeMeta.kind of type string"},
		{name: "empty", in: ``, err: "unexpected end of JSON input (offset 0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apiVersion, kind, err := TypeMeta([]byte(tt.in))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("TypeMeta error = %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil || apiVersion != tt.apiVersion || kind != tt.kind {
				t.Errorf("TypeMeta = %q, %q, %v; want %q, %q", apiVersion, kind, err, tt.apiVersion, tt.kind)
			}
		})
	}
}

// TestRoundTrip: what Marshal writes, Unmarshal reads back to an equal
// message, for each kind of object the control plane passes around.
func TestRoundTrip(t *testing.T) {
	pod := makePod().name("web-7c9d8f6b5-x2kqp").namespace("default").label("app", "web").
		container("nginx", "nginx:1.27").port("http", 80).requests("cpu", "100m", "memory", "64Mi").
		emptyDir("cache").node("node-1").gracePeriod(30).created(1796032800).phase("Running").obj()
	pod.Status.StartTime = &metav1.Time{Seconds: 1796032801}
	pod.Status.ContainerStatuses = []*corev1.ContainerStatus{{Name: "nginx", Ready: true, Started: proto.Bool(true),
		State:     &corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: &metav1.Time{Seconds: 1796032805}}},
		LastState: &corev1.ContainerState{}}}
	deployment := makeDeployment().name("web").replicas(3).rollingUpdate(intOrString("25%"), intOrInt(1)).obj()
	deployment.Spec.Template.Spec = pod.Spec
	deployment.Status = &appsv1.DeploymentStatus{}
	tests := []struct {
		name string
		in   proto.Message
	}{
		{"Pod", pod},
		{"Deployment", deployment},
		{"Status", &metav1.Status{ApiVersion: "v1", Kind: "Status", Metadata: &metav1.ListMeta{}, Status: "Failure", Reason: "Conflict", Code: 409,
			Message: `Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again`,
			Details: &metav1.StatusDetails{Name: "web", Group: "apps", Kind: "deployments"}}},
		{"Secret", &corev1.Secret{ApiVersion: "v1", Kind: "Secret", Metadata: &metav1.ObjectMeta{Name: "db"}, Immutable: proto.Bool(false),
			Data: map[string][]byte{"password": {0, 1, 2, 0xff}, "empty": {}}, StringData: map[string]string{"user": "admin"}, Type: "Opaque"}},
		{"Service with IntOrString targetPort", &corev1.Service{ApiVersion: "v1", Kind: "Service", Metadata: &metav1.ObjectMeta{Name: "web"},
			Spec: &corev1.ServiceSpec{Ports: []*corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: intOrInt(8080)},
				{Name: "metrics", Port: 9090, TargetPort: intOrString("metrics")},
				{Name: "zero", Port: 81, TargetPort: intOrInt(0)},
			}}, Status: &corev1.ServiceStatus{LoadBalancer: &corev1.LoadBalancerStatus{}}}},
		{"Lease with MicroTime", &coordinationv1.Lease{ApiVersion: "coordination.k8s.io/v1", Kind: "Lease",
			Metadata: &metav1.ObjectMeta{Name: "kube-scheduler", Namespace: "kube-system"},
			Spec: &coordinationv1.LeaseSpec{HolderIdentity: proto.String("scheduler-0"), LeaseDurationSeconds: proto.Int32(15),
				AcquireTime: &metav1.MicroTime{Seconds: 1796032800, Nanos: 412380000}, RenewTime: &metav1.MicroTime{Seconds: 1796032844},
				LeaseTransitions: proto.Int32(0)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := Marshal(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			got := tt.in.ProtoReflect().New().Interface()
			if _, err := Unmarshal(data, got); err != nil {
				t.Fatalf("Unmarshal(%s): %v", data, err)
			}
			if !proto.Equal(got, tt.in) {
				t.Errorf("round trip changed the message:\n%s\ngot  %v\nwant %v", data, got, tt.in)
			}
		})
	}
}

func TestNothingLeaksBetweenCalls(t *testing.T) {
	// Decoders and encoders are pooled; one call's problems must not show
	// up in the next.
	if _, err := Unmarshal([]byte(`{"foo":1,"metadata":{"name":"a","name":"b"}}`), &corev1.Pod{}); err == nil {
		t.Fatal("want a strict error")
	}
	if warnings, err := Unmarshal([]byte(`{"metadata":{"name":"c"}}`), &corev1.Pod{}, Warn); err != nil || warnings != nil {
		t.Errorf("second Unmarshal = %q, %v", warnings, err)
	}
	if _, err := Marshal(makeDeployment().rollingUpdate(&metav1.IntOrString{Type: 9}, nil).obj()); err == nil {
		t.Fatal("want a marshal error")
	}
	if got, err := Marshal(&metav1.ListMeta{Continue: "x"}); err != nil || string(got) != `{"continue":"x"}` {
		t.Errorf("second Marshal = %s, %v", got, err)
	}
}

func TestConcurrentUse(t *testing.T) {
	data, err := Marshal(makePod().name("web").label("app", "web").container("nginx", "nginx").port("http", 80).obj())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	for range 8 {
		go func() {
			for range 50 {
				pod := &corev1.Pod{}
				if _, err := Unmarshal(data, pod); err != nil {
					done <- err
					return
				}
				out, err := Marshal(pod)
				if err != nil || string(out) != string(data) {
					done <- fmt.Errorf("Marshal = %s, %v", out, err)
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestSyntaxErrorsReadAsEncodingJSON: a malformed body gets the message and
// offset encoding/json (so Kubernetes) gives it.
func TestSyntaxErrorsReadAsEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,`, `{"a" 1}`, `{"a":1 "b":2}`, `[1 2]`,
		`{"a":"\x"}`, `{"a":"\u12G4"}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":01}`,
		`{"a":tru}`, `{"a":nul}`, `{"a":fals}`, `{"a":[}`, `{"a":{"b":[1,]}}`, `{} x`, `  `,
		`{'a':1}`, "{\"a\":\"\x01\"}",
	} {
		var v any
		var want *json.SyntaxError
		if !errors.As(json.Unmarshal([]byte(in), &v), &want) {
			t.Fatalf("%q: encoding/json found no syntax error", in)
		}
		_, err := Unmarshal([]byte(in), &metav1.ObjectMeta{}, Ignore)
		var got *FieldError
		if !errors.As(err, &got) || got.Reason != ReasonMalformed || got.Message != want.Error() || got.Offset != want.Offset {
			t.Errorf("%q: got %v, want %q at offset %d", in, err, want, want.Offset)
		}
	}
}
