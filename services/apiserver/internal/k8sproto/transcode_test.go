package k8sproto

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func TestToJSONWritesKubernetesJSON(t *testing.T) {
	container := cat(
		str(1, "web"), str(2, "nginx:1.27"),
		sub(6, str(1, "http"), varint(2, 0), varint(3, 8080), str(4, "TCP"), str(5, "")),
		sub(8, qty(1, "cpu", "500m"), qty(1, "memory", "128Mi"), qty(2, "cpu", "100m")),
		sub(10, sub(1, sub(2, str(1, "/healthz"), intVal(2, 8080), str(3, ""), str(4, "HTTP"))),
			varint(2, 3), varint(3, 1), varint(4, 10), varint(5, 1), varint(6, 3)),
		sub(11, sub(1, sub(3, strVal(1, "http"), str(2, ""))), varint(2, 0)),
		str(13, "/dev/termination-log"), str(14, "IfNotPresent"), varint(16, 0))
	podSpec := cat(sub(2, container), str(3, "Always"), sub(14, varint(4, 1000), varint(4, 2000)))
	tests := []struct {
		name string
		body []byte
		want string
	}{{
		name: "a Deployment keeps a present zero (replicas: 0) and drops Kubernetes' empty plain fields",
		body: body("apps/v1", "Deployment",
			meta("web", "", entry(11, "app", "web")),
			sub(2, varint(1, 0), sub(2, entry(1, "app", "web")),
				sub(3, meta("", "", entry(11, "app", "web")), sub(2, podSpec)),
				sub(4, str(1, "RollingUpdate"), sub(2, strVal(1, "25%"), intVal(2, 1))),
				varint(5, 0), varint(7, 0)),
			sub(3)),
		want: `{"apiVersion":"apps/v1","kind":"Deployment",
			"metadata":{"name":"web","labels":{"app":"web"}},
			"spec":{"replicas":0,"selector":{"matchLabels":{"app":"web"}},
				"template":{"metadata":{"labels":{"app":"web"}},"spec":{
					"containers":[{"name":"web","image":"nginx:1.27",
						"ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],
						"resources":{"limits":{"cpu":"500m","memory":"128Mi"},"requests":{"cpu":"100m"}},
						"livenessProbe":{"httpGet":{"path":"/healthz","port":8080,"scheme":"HTTP"},
							"initialDelaySeconds":3,"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3},
						"readinessProbe":{"tcpSocket":{"port":"http"}},
						"terminationMessagePath":"/dev/termination-log","imagePullPolicy":"IfNotPresent"}],
					"restartPolicy":"Always","securityContext":{"supplementalGroups":[1000,2000]}}},
				"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":1}}},
			"status":{}}`,
	}, {
		name: "a Pod's volume source and a ConfigMap reference are inlined",
		body: body("v1", "Pod", meta("p", "default"),
			sub(2, sub(1, str(1, "cfg"), sub(2, sub(19, sub(1, str(1, "settings")), varint(3, 0o644)))),
				sub(2, str(1, "c"), str(2, "x"), sub(19, sub(2, sub(1, str(1, "settings")), varint(2, 1)))))),
		want: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},
			"spec":{"volumes":[{"name":"cfg","configMap":{"name":"settings","defaultMode":420}}],
				"containers":[{"name":"c","image":"x","envFrom":[{"configMapRef":{"name":"settings","optional":true}}]}]}}`,
	}, {
		name: "a Namespace with finalizers",
		body: body("v1", "Namespace", meta("t", ""), sub(2, str(1, "kubernetes")), sub(3)),
		want: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"t"},"spec":{"finalizers":["kubernetes"]},"status":{}}`,
	}, {
		name: "a ConfigMap's data and binaryData",
		body: body("v1", "ConfigMap", meta("c", "default"), entry(2, "a", "b"), entry(3, "bin", "\x00\x01")),
		want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"},"data":{"a":"b"},"binaryData":{"bin":"AAE="}}`,
	}, {
		name: "a Secret's bytes are base64 and its immutable false is kept",
		body: body("v1", "Secret", meta("s", "default"), entry(2, "a", "b"), str(3, "Opaque"), varint(5, 0)),
		want: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"default"},"data":{"a":"Yg=="},"type":"Opaque","immutable":false}`,
	}, {
		name: "a Service's ports with int and named targetPort",
		body: body("v1", "Service", meta("web", "default"),
			sub(2, sub(1, str(1, "http"), str(2, "TCP"), varint(3, 80), intVal(4, 8080), varint(5, 0)),
				sub(1, str(1, "alt"), str(2, "TCP"), varint(3, 81), strVal(4, "http"), varint(5, 0)),
				entry(2, "app", "web"), str(4, "ClusterIP"), str(7, "None")),
			sub(3, sub(1))),
		want: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"default"},
			"spec":{"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":8080},{"name":"alt","protocol":"TCP","port":81,"targetPort":"http"}],
				"selector":{"app":"web"},"type":"ClusterIP","sessionAffinity":"None"},
			"status":{"loadBalancer":{}}}`,
	}, {
		name: "times: an empty Time is left out, others are RFC 3339 (MicroTime with microseconds)",
		body: body("coordination.k8s.io/v1", "Lease",
			sub(1, str(1, "l"), sub(8, varint(1, 1700000000)), sub(9)),
			sub(2, str(1, "me"), varint(2, 15), sub(3, varint(1, 1700000001), varint(2, 123456000)))),
		want: `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease",
			"metadata":{"name":"l","creationTimestamp":"2023-11-14T22:13:20Z"},
			"spec":{"holderIdentity":"me","leaseDurationSeconds":15,"acquireTime":"2023-11-14T22:13:21.123456Z"}}`,
	}, {
		name: "a negative int32 is sent sign-extended",
		body: body("v1", "Pod", sub(2, varint(25, -5))),
		want: `{"apiVersion":"v1","kind":"Pod","spec":{"priority":-5}}`,
	}, {
		name: "packed repeated int64",
		body: body("v1", "Pod", sub(2, sub(14, packed(4, 1, 2, 300)))),
		want: `{"apiVersion":"v1","kind":"Pod","spec":{"securityContext":{"supplementalGroups":[1,2,300]}}}`,
	}, {
		name: "a message seen twice is merged and a scalar's last value wins",
		body: body("v1", "Pod", sub(1, str(1, "a")), sub(1, str(3, "ns")), sub(1, str(1, "b"))),
		want: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b","namespace":"ns"}}`,
	}, {
		name: "DeleteOptions under a group's apiVersion",
		body: body("apps/v1", "DeleteOptions", varint(1, 0), str(4, "Foreground"), str(5, "All")),
		want: `{"apiVersion":"apps/v1","kind":"DeleteOptions","gracePeriodSeconds":0,"propagationPolicy":"Foreground","dryRun":["All"]}`,
	}, {
		name: "managed fields carry their JSON as is",
		body: body("v1", "ConfigMap", sub(1, sub(17, str(1, "kubectl"), sub(7, str(1, `{"f:data":{}}`))))),
		want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"managedFields":[{"manager":"kubectl","fieldsV1":{"f:data":{}}}]}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToJSON(tt.body)
			if err != nil {
				t.Fatal(err)
			}
			assertJSON(t, got, tt.want)
		})
	}
}

func TestToJSONRefusesWhatItCannotRead(t *testing.T) {
	tests := []struct {
		name   string
		body   []byte
		field  string
		reason string
		msg    string
	}{{
		name:   "an unknown field number deep in a Deployment, named with its path",
		body:   body("apps/v1", "Deployment", sub(2, sub(3, sub(2, sub(2, str(1, "c")), varint(99, 1))))),
		field:  "spec.template.spec",
		reason: ReasonUnknown,
		msg:    "unknown field number 99 in Kubernetes message core.v1.PodSpec",
	}, {
		name:   "an unknown field number in a container in a list",
		body:   body("v1", "Pod", sub(2, sub(2, str(1, "a")), sub(2, str(1, "b"), str(77, "x")))),
		field:  "spec.containers[1]",
		reason: ReasonUnknown,
		msg:    "unknown field number 77",
	}, {
		name:   "an unknown field number in the object itself",
		body:   body("v1", "Namespace", varint(42, 1)),
		field:  "",
		reason: ReasonUnknown,
		msg:    "unknown field number 42 in Kubernetes message core.v1.Namespace",
	}, {
		name:   "a known field with the wrong wire type",
		body:   body("apps/v1", "Deployment", sub(2, str(1, "2"))),
		field:  "spec.replicas",
		reason: ReasonTypeInvalid,
		msg:    "unexpected wire type 2",
	}, {
		name:   "an unknown field in a Quantity",
		body:   body("v1", "Pod", sub(2, sub(2, sub(8, sub(1, str(1, "cpu"), sub(2, str(2, "1"))))))),
		field:  "spec.containers[0].resources.limits",
		reason: ReasonUnknown,
		msg:    "resource.Quantity",
	}, {
		name:   "a kind podline does not serve",
		body:   body("batch/v1", "Job"),
		reason: ReasonMalformed,
		msg:    `no kind "Job" is registered for version "batch/v1"`,
	}, {
		name:   "JSON without the protobuf prefix",
		body:   []byte(`{"kind":"Pod"}`),
		reason: ReasonMalformed,
		msg:    "prefix",
	}, {
		name:   "a truncated object",
		body:   body("v1", "Pod", sub(1, str(1, "name"))[:5]),
		field:  "",
		reason: ReasonMalformed,
		msg:    "field 1",
	}, {
		name:   "a gzip-encoded raw object",
		body:   cat([]byte("k8s\x00"), sub(1, str(1, "v1"), str(2, "Pod")), str(3, "gzip")),
		reason: ReasonMalformed,
		msg:    `content encoding "gzip"`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ToJSON(tt.body)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %s, %v; want an *Error", out, err)
			}
			if e.Field != tt.field || e.Reason != tt.reason || !strings.Contains(e.Message, tt.msg) {
				t.Fatalf("got %+v; want field %q, reason %s, message with %q", e, tt.field, tt.reason, tt.msg)
			}
		})
	}
}

func packed(num int, xs ...uint64) []byte {
	var v []byte
	for _, x := range xs {
		v = protowire.AppendVarint(v, x)
	}
	b := protowire.AppendTag(nil, protowire.Number(num), protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func assertJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		gi, _ := json.MarshalIndent(g, "", " ")
		wi, _ := json.MarshalIndent(w, "", " ")
		t.Fatalf("got\n%s\nwant\n%s", gi, wi)
	}
}
