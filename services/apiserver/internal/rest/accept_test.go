package rest

import (
	"net/http"
	"testing"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

func TestCheckAcceptPicksTheFirstRangeItCanAnswer(t *testing.T) {
	tests := []struct {
		accept      string
		table, fail bool
	}{
		{accept: ""},
		{accept: "application/json"},
		{accept: "*/*"},
		{accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", table: true},
		{accept: "application/json;as=Table;v=v1;g=meta.k8s.io", table: true},
		{accept: "application/json,application/json;as=Table;v=v1;g=meta.k8s.io"},
		{accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"},
		{accept: "application/vnd.kubernetes.protobuf,application/json"},
		{accept: "application/json;as=Table;v=v1beta1;g=meta.k8s.io", fail: true},
		{accept: "application/vnd.kubernetes.protobuf", fail: true},
		{accept: "application/yaml", fail: true},
	}
	for _, tt := range tests {
		var values []string
		if tt.accept != "" {
			values = []string{tt.accept}
		}
		table, se := checkAccept(values)
		if table != tt.table || (se != nil) != tt.fail {
			t.Errorf("Accept %q: table %v, error %v; want table %v, failure %v", tt.accept, table, se, tt.table, tt.fail)
		}
	}
}

func TestWantsAggregated(t *testing.T) {
	tests := map[string]bool{
		"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json": true,
		"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json":                                                                      false,
		"application/json": false,
		"":                 false,
	}
	for accept, want := range tests {
		r, _ := http.NewRequest("GET", "/apis", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if got := wantsAggregated(r); got != want {
			t.Errorf("Accept %q: aggregated %v, want %v", accept, got, want)
		}
	}
}

func TestAcceptsJSON(t *testing.T) {
	tests := map[string]bool{
		"": true, "application/json": true, "application/json, */*": true,
		"application/com.github.proto-openapi.spec.v2@v1.0+protobuf": false,
	}
	for accept, want := range tests {
		var values []string
		if accept != "" {
			values = []string{accept}
		}
		if got := acceptsJSON(values); got != want {
			t.Errorf("Accept %q: JSON %v, want %v", accept, got, want)
		}
	}
}

func TestWatchEventParts(t *testing.T) {
	ev := &corev1.PodWatchEvent{Type: "MODIFIED", Object: &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "a"}}}
	typ, obj, ok := watchEventParts(ev)
	if !ok || typ != "MODIFIED" || obj.(*corev1.Pod).GetMetadata().GetName() != "a" {
		t.Errorf("watchEventParts = %q %v %v", typ, obj, ok)
	}
	if _, _, ok := watchEventParts(&corev1.Pod{}); ok {
		t.Error("a Pod taken for a watch event")
	}
}
