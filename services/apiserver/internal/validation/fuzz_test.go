package validation_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/k8sjson"
	"podline.dev/pkg/object"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/admission/plugins/defaulting"
	"podline.dev/services/apiserver/internal/validation"
)

// The fuzz targets drive the write path's pure part: Kubernetes JSON
// decoding, defaulting and validation. Beyond not panicking they check
// three properties: defaulting is idempotent; an object compared with
// itself breaks no update rule; and an object that validates still
// validates, unchanged, after a JSON round trip.

var podSeeds = []string{
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"default","labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80}]}]}}`,
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"initContainers":[{"name":"init","image":"busybox","command":["true"]}],"containers":[{"name":"a","image":"a","resources":{"limits":{"cpu":"500m","memory":"128Mi"}},"livenessProbe":{"httpGet":{"port":"http"}},"env":[{"name":"X","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}}]}],"volumes":[{"name":"v"},{"name":"c","configMap":{"name":"cfg"}}],"tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":5}]}}`,
	`{"metadata":{"name":"Bad_Name","labels":{"-x":"y"}},"spec":{"containers":[{"name":"","image":"","ports":[{"containerPort":70000,"protocol":"ICMP"}]}],"restartPolicy":"Sometimes"}}`,
	`{"spec":{"containers":[{"name":"a","image":"a","securityContext":{"privileged":true,"capabilities":{"add":["NET_ADMIN"]}}}],"hostNetwork":true,"securityContext":{"runAsUser":0}}}`,
	`{}`,
}

var deploymentSeeds = []string{
	`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"web:1"}]}}}}`,
	`{"metadata":{"name":"d"},"spec":{"replicas":-1,"selector":{"matchExpressions":[{"key":"app","operator":"In","values":["a","b"]}]},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":0,"maxUnavailable":"0%"}},"template":{"metadata":{"labels":{"app":"c"}},"spec":{"containers":[{"name":"x","image":"x"}],"restartPolicy":"Never"}}}}`,
	`{"metadata":{"name":"d"},"spec":{"strategy":{"type":"Recreate"},"minReadySeconds":700,"progressDeadlineSeconds":600,"selector":{},"template":{}}}`,
}

func FuzzDecodeValidatePod(f *testing.F) {
	for _, s := range podSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { check(t, data, &corev1.Pod{}, true) })
}

func FuzzDecodeValidateDeployment(f *testing.F) {
	for _, s := range deploymentSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { check(t, data, &appsv1.Deployment{}, true) })
}

// TestSeedsDecodeAndValidate runs the seeds as plain tests and makes sure
// they reach validation both ways (some pass, some fail).
func TestSeedsDecodeAndValidate(t *testing.T) {
	pass, fail := 0, 0
	for _, s := range podSeeds {
		if check(t, []byte(s), &corev1.Pod{}, true) {
			pass++
		} else {
			fail++
		}
	}
	for _, s := range deploymentSeeds {
		if check(t, []byte(s), &appsv1.Deployment{}, true) {
			pass++
		} else {
			fail++
		}
	}
	if pass < 2 || fail < 2 {
		t.Fatalf("seeds: %d valid, %d invalid; want some of each", pass, fail)
	}
}

// check decodes data into obj and runs defaulting and validation; it
// reports whether the object validated.
func check[T object.Object](t *testing.T, data []byte, obj T, namespaced bool) bool {
	if _, err := k8sjson.Unmarshal(data, obj, k8sjson.Ignore); err != nil {
		return false
	}
	if obj.GetMetadata() == nil {
		return false
	}
	defaulting.Apply(obj)
	again := proto.Clone(obj).(T)
	defaulting.Apply(again)
	if !proto.Equal(obj, again) {
		t.Fatalf("defaulting is not idempotent:\n once  %v\n twice %v", obj, again)
	}
	if errs := validation.ValidateKindUpdate(obj, proto.Clone(obj).(T)); len(errs) > 0 {
		t.Fatalf("an unchanged object breaks update rules: %v", errs)
	}
	md := obj.GetMetadata()
	if md.Namespace == "" {
		md.Namespace = "default"
	}
	errs := validation.ValidateObjectMeta(md, namespaced, "")
	errs = append(errs, validation.ValidateKind(obj)...)
	for _, e := range errs {
		if e.Field == "" || e.Error() == "" {
			t.Fatalf("error without a field path: %#v", e)
		}
	}
	if len(errs) > 0 {
		return false
	}
	out, err := k8sjson.Marshal(obj)
	if err != nil {
		t.Fatalf("a valid object does not encode: %v", err)
	}
	back := proto.Clone(obj).(T)
	proto.Reset(back)
	if _, err := k8sjson.Unmarshal(out, back); err != nil {
		t.Fatalf("a valid object's JSON does not decode: %v\n%s", err, out)
	}
	if !proto.Equal(obj, back) {
		t.Fatalf("JSON round trip changed a valid object:\n before %v\n after  %v\n json   %s", obj, back, out)
	}
	return true
}
