package test

import (
	"testing"

	"podline.dev/services/apiserver/apiservertest"
)

func sar(user string, groups []string, verb, resource, sub, name string) map[string]any {
	spec := map[string]any{"resourceAttributes": map[string]any{
		"verb": verb, "resource": resource, "subresource": sub, "name": name}}
	if user != "" {
		spec["user"] = user
	}
	if groups != nil {
		spec["groups"] = groups
	}
	return map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
}

// A SubjectAccessReview asks the chain about another user: kubelets ask it
// before serving their API (nodes/proxy), so they and administrators may
// create one, and the answer is the same as that user's own request would
// get.
func TestSubjectAccessReview(t *testing.T) {
	s := apiservertest.StartSecure(t)
	url := s.URL + "/apis/authorization.k8s.io/v1/subjectaccessreviews"
	kubelet := s.HTTPClientWith(t, s.NodeCredentials("node-1"))
	for _, c := range []struct {
		name    string
		review  map[string]any
		allowed bool
	}{
		{"the apiserver's kubelet client may proxy to nodes (kubeadm's binding)",
			sar("kube-apiserver-kubelet-client", []string{"system:authenticated"}, "create", "nodes", "proxy", "node-1"), true},
		{"a user without a binding may not",
			sar("alice", []string{"system:authenticated"}, "get", "nodes", "proxy", "node-1"), false},
		{"system:masters may",
			sar("root", []string{"system:masters", "system:authenticated"}, "create", "nodes", "proxy", "node-1"), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, st := restDo(t, kubelet, "POST", url, c.review)
			status, _ := st["status"].(map[string]any)
			if code != 201 || st["kind"] != "SubjectAccessReview" || status["allowed"] != c.allowed {
				t.Fatalf("%d %v, want 201 allowed=%v", code, st, c.allowed)
			}
		})
	}

	code, st := restDo(t, kubelet, "POST", url, sar("", nil, "get", "nodes", "proxy", "node-1"))
	if code != 422 || st["reason"] != "Invalid" {
		t.Fatalf("no user or group: %d %v", code, st)
	}
	alice := s.HTTPClientWith(t, s.Credentials(t, "alice"))
	code, st = restDo(t, alice, "POST", url, sar("alice", nil, "get", "pods", "", ""))
	want := `subjectaccessreviews.authorization.k8s.io is forbidden: User "alice" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope`
	if code != 403 || st["message"] != want {
		t.Fatalf("alice creating a review: %d %v\nwant 403 %q", code, st, want)
	}
}
