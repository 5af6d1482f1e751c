package plugins

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/protobuf/proto"

	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/admission"
	"podline.dev/services/apiserver/internal/admission/plugins/defaulting"
	"podline.dev/services/apiserver/internal/admission/plugins/priority"
	"podline.dev/services/apiserver/internal/admission/plugins/serviceaccount"
	"podline.dev/services/apiserver/internal/admission/plugins/tolerationseconds"
)

// TestMutatingSpanNamesThePluginsThatChangedThePod runs the whole chain on
// a bare pod, whose span names every plugin that fills something in, and
// then on the pod it made, which none changes.
func TestMutatingSpanNamesThePluginsThatChangedThePod(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	pods, _ := apis.Lookup("", "pods")
	chain := NewChain(Sources{
		Namespaces: admission.NewMemory("", "namespaces", &corev1.Namespace{Metadata: &metav1.ObjectMeta{Name: "team"}}),
		ServiceAccounts: admission.NewMemory("", "serviceaccounts",
			&corev1.ServiceAccount{Metadata: &metav1.ObjectMeta{Name: "default", Namespace: "team"}}),
		PriorityClasses:    admission.NewMemory("scheduling.k8s.io", "priorityclasses"),
		ResourceQuotas:     admission.NewMemory("", "resourcequotas"),
		LiveResourceQuotas: admission.NewMemory("", "resourcequotas"),
		Pods:               admission.NewMemory("", "pods"),
		CachedPods:         admission.NewMemory("", "pods"),
	})
	mutated := func(pod *corev1.Pod) []string {
		t.Helper()
		rec.Reset()
		a := &admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "team", Name: pod.Metadata.Name, Object: pod}
		if err := chain.Admit(context.Background(), a, nil); err != nil {
			t.Fatal(err)
		}
		for _, sp := range rec.Ended() {
			for _, kv := range sp.Attributes() {
				if kv.Key == admission.AttrPhase && kv.Value.AsString() == "mutating" {
					return attr(sp.Attributes(), admission.AttrMutated)
				}
			}
		}
		t.Fatal("no mutating admission span")
		return nil
	}
	pod := &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "web", Namespace: "team"},
		Spec: &corev1.PodSpec{Containers: []*corev1.Container{{Name: "web", Image: "web:1"}}}}
	want := []string{defaulting.Name, serviceaccount.Name, tolerationseconds.Name, priority.Name}
	if got := mutated(pod); !slices.Equal(got, want) {
		t.Fatalf("a bare pod: mutated %q, want %q", got, want)
	}
	again := proto.Clone(pod).(*corev1.Pod)
	if got := mutated(again); len(got) != 0 {
		t.Fatalf("the admitted pod again: mutated %q, want none", got)
	}
	if !proto.Equal(again, pod) {
		t.Fatalf("the admitted pod changed when admitted again:\n%v\n%v", again, pod)
	}
}

func attr(kvs []attribute.KeyValue, key attribute.Key) []string {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value.AsStringSlice()
		}
	}
	return nil
}
