package test

import (
	"testing"

	"podline.dev/services/apiserver/apiservertest"
)

// A SubjectAccessReview carries a list's field selector, raw or as
// requirements, so a server that asks (a watchcache replica) gets the Node
// authorizer's answer: a kubelet may list and watch the pods of its own
// node only.
func TestSubjectAccessReviewWithAFieldSelector(t *testing.T) {
	s := apiservertest.StartSecure(t)
	url := s.URL + "/apis/authorization.k8s.io/v1/subjectaccessreviews"
	admin := s.HTTPClientWith(t, s.Credentials(t, "root", "system:masters"))
	review := func(verb string, selector map[string]any) map[string]any {
		ra := map[string]any{"verb": verb, "resource": "pods"}
		if selector != nil {
			ra["fieldSelector"] = selector
		}
		return map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
			"spec": map[string]any{"user": "system:node:node-1", "groups": []string{"system:nodes", "system:authenticated"}, "resourceAttributes": ra}}
	}
	in := func(key string, values ...string) map[string]any {
		return map[string]any{"requirements": []map[string]any{{"key": key, "operator": "In", "values": values}}}
	}
	for _, c := range []struct {
		name    string
		review  map[string]any
		allowed bool
	}{
		{"watch of its own pods, raw", review("watch", map[string]any{"rawSelector": "spec.nodeName=node-1"}), true},
		{"list of its own pods, as a requirement", review("list", in("spec.nodeName", "node-1")), true},
		{"watch of every pod", review("watch", nil), false},
		{"watch of another node's pods", review("watch", map[string]any{"rawSelector": "spec.nodeName=node-2"}), false},
		{"requirements win over the raw selector", review("list", map[string]any{"rawSelector": "spec.nodeName=node-1",
			"requirements": []map[string]any{{"key": "spec.nodeName", "operator": "In", "values": []string{"node-1", "node-2"}}}}), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, st := restDo(t, admin, "POST", url, c.review)
			status, _ := st["status"].(map[string]any)
			if code != 201 || status["allowed"] != c.allowed {
				t.Fatalf("%d %v, want 201 allowed=%v", code, st, c.allowed)
			}
		})
	}
}
