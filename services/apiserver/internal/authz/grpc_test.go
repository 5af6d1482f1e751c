package authz

import (
	"testing"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

func TestFromGRPC(t *testing.T) {
	tests := []struct {
		name   string
		method string
		req    any
		want   Attributes
		wantOK bool
	}{
		{"get", "/podline.core.v1.Pods/Get", &metav1.GetRequest{Namespace: "default", Name: "web"},
			Attributes{Verb: "get", Resource: "pods", Namespace: "default", Name: "web"}, true},
		{"list with selector", "/podline.core.v1.Pods/List", &metav1.ListRequest{FieldSelector: "spec.nodeName=n1"},
			Attributes{Verb: "list", Resource: "pods", FieldSelector: "spec.nodeName=n1"}, true},
		{"list with watch=true is watch", "/podline.core.v1.Pods/List", &metav1.ListRequest{Namespace: "ns", Watch: true},
			Attributes{Verb: "watch", Resource: "pods", Namespace: "ns"}, true},
		{"watch", "/podline.apps.v1.Deployments/Watch", &metav1.ListRequest{Namespace: "ns"},
			Attributes{Verb: "watch", APIGroup: "apps", Resource: "deployments", Namespace: "ns"}, true},
		{"create has no name", "/podline.core.v1.Pods/Create", &corev1.PodWriteRequest{Namespace: "default", Name: "web"},
			Attributes{Verb: "create", Resource: "pods", Namespace: "default"}, true},
		{"update status", "/podline.core.v1.Nodes/UpdateStatus", &corev1.NodeWriteRequest{Name: "n1"},
			Attributes{Verb: "update", Resource: "nodes", Subresource: "status", Name: "n1"}, true},
		{"bind is create of pods/binding", "/podline.core.v1.Pods/Bind", &corev1.BindingWriteRequest{Namespace: "default", Name: "web"},
			Attributes{Verb: "create", Resource: "pods", Subresource: "binding", Namespace: "default", Name: "web"}, true},
		{"delete", "/podline.rbac.v1.ClusterRoleBindings/Delete", &metav1.DeleteRequest{Name: "x"},
			Attributes{Verb: "delete", APIGroup: "rbac.authorization.k8s.io", Resource: "clusterrolebindings", Name: "x"}, true},
		{"patch", "/podline.apps.v1.Deployments/Patch", &metav1.PatchRequest{Namespace: "ns", Name: "web"},
			Attributes{Verb: "patch", APIGroup: "apps", Resource: "deployments", Namespace: "ns", Name: "web"}, true},
		{"patch status", "/podline.core.v1.Pods/PatchStatus", &metav1.PatchRequest{Namespace: "ns", Name: "web"},
			Attributes{Verb: "patch", Resource: "pods", Subresource: "status", Namespace: "ns", Name: "web"}, true},
		{"get status", "/podline.core.v1.Nodes/GetStatus", &metav1.GetRequest{Name: "n1"},
			Attributes{Verb: "get", Resource: "nodes", Subresource: "status", Name: "n1"}, true},
		{"update scale", "/podline.apps.v1.ReplicaSets/UpdateScale", &metav1.GetRequest{Namespace: "ns", Name: "rs"},
			Attributes{Verb: "update", APIGroup: "apps", Resource: "replicasets", Subresource: "scale", Namespace: "ns", Name: "rs"}, true},
		{"patch scale", "/podline.apps.v1.Deployments/PatchScale", &metav1.PatchRequest{Namespace: "ns", Name: "web"},
			Attributes{Verb: "patch", APIGroup: "apps", Resource: "deployments", Subresource: "scale", Namespace: "ns", Name: "web"}, true},
		{"deletecollection", "/podline.core.v1.Pods/DeleteCollection", &metav1.DeleteCollectionRequest{Namespace: "ns"},
			Attributes{Verb: "deletecollection", Resource: "pods", Namespace: "ns"}, true},
		{"not a resource service", "/grpc.health.v1.Health/Check", nil, Attributes{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FromGRPC(tt.method, tt.req)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v", ok)
			}
			if ok {
				tt.want.ResourceRequest = true
			}
			if got != tt.want {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestIsResourcePath(t *testing.T) {
	for p, want := range map[string]bool{
		"/api": false, "/api/v1": false, "/apis/apps": false, "/apis/apps/v1": false, "/healthz": false, "/version": false,
		"/api/v1/pods": true, "/api/v1/namespaces/default/pods/web/status": true, "/apis/apps/v1/deployments": true,
	} {
		if got := IsResourcePath(p); got != want {
			t.Errorf("IsResourcePath(%q) = %v", p, got)
		}
	}
}
