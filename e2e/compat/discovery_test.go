package compat

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"
)

// client-go's discovery finds the server's version and resources, and a
// RESTMapper built from it maps kinds to the resources the clientset uses,
// as kubectl and controller-manager's garbage collector do.
func TestDiscoveryAndRESTMapper(t *testing.T) {
	s, _ := start(t)
	dc, err := discovery.NewDiscoveryClientForConfig(config(s))
	if err != nil {
		t.Fatal(err)
	}
	v, err := dc.ServerVersion()
	if err != nil || v.Major != "1" || !strings.HasPrefix(v.GitVersion, "v1.37") {
		t.Fatalf("version: %+v, %v", v, err)
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		t.Fatalf("group resources: %v", err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	tests := []struct {
		kind       schema.GroupKind
		resource   schema.GroupVersionResource
		namespaced bool
	}{
		{schema.GroupKind{Kind: "Pod"}, schema.GroupVersionResource{Version: "v1", Resource: "pods"}, true},
		{schema.GroupKind{Kind: "Node"}, schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, false},
		{schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, true},
	}
	for _, tt := range tests {
		m, err := mapper.RESTMapping(tt.kind)
		if err != nil {
			t.Fatalf("%v: %v", tt.kind, err)
		}
		if m.Resource != tt.resource || (m.Scope.Name() == "namespace") != tt.namespaced {
			t.Fatalf("%v maps to %v, scope %s", tt.kind, m.Resource, m.Scope.Name())
		}
	}
}
