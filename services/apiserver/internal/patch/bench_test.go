package patch

import (
	"strings"
	"testing"
)

// BenchmarkStrategicMergeKubectlApply is the server's share of a client-side
// kubectl apply that changes one image in a two-container Deployment.
func BenchmarkStrategicMergeKubectlApply(b *testing.B) {
	doc := mustDecode(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web"}},
		"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{
		"containers":[{"name":"web","image":"web:1","ports":[{"containerPort":80}],"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]},
		{"name":"side","image":"side:1"}]}}}}`).(map[string]any)
	p := mustDecode(`{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"web"},{"name":"side"}],
		"containers":[{"image":"web:2","name":"web"}]}}}}`).(map[string]any)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := StrategicMerge(doc, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyDeployment is a server-side apply of the same Deployment
// by its only manager (no conflicts): field sets, pruning and the merge.
func BenchmarkApplyDeployment(b *testing.B) {
	live := mustDecode(`{"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{
		"containers":[{"name":"web","image":"web:1","ports":[{"containerPort":80}],"env":[{"name":"A","value":"1"}]}]}}}}`).(map[string]any)
	_, m, err := Apply(nil, live, nil, "me", "apps/v1", "", false, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	config := mustDecode(`{"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{
		"containers":[{"name":"web","image":"web:2","ports":[{"containerPort":80}],"env":[{"name":"A","value":"1"}]}]}}}}`).(map[string]any)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Apply(live, config, m, "me", "apps/v1", "", false, 2, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMembersOfJSONPod reads the managed fields of bench-api's pod
// create from its JSON text.
func BenchmarkMembersOfJSONPod(b *testing.B) {
	doc := []byte(`{"metadata":{"name":"tput-000001","namespace":"default","labels":{"app":"tput","tier":"bench"},"annotations":{"bench.podline.dev/padding":"` +
		strings.Repeat("x", 600) + `"}},"spec":{"containers":[{"name":"web","image":"registry.podline:5000/demo/web:1.0","resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}}`)
	b.ReportAllocs()
	for b.Loop() {
		m, err := MembersOfJSON(doc, nil)
		if err != nil {
			b.Fatal(err)
		}
		_ = m.MarshalFieldsV1()
	}
}
