package authz

import (
	"context"
	"errors"
	"testing"

	"podline.dev/pkg/apierrors"
	"podline.dev/services/apiserver/internal/request"
)

func TestForbiddenReadsLikeKubernetes(t *testing.T) {
	x := &request.User{Name: "x"}
	tests := []struct {
		name   string
		a      Attributes
		reason string
		want   string
	}{
		{"namespaced create", Attributes{User: x, Verb: "create", ResourceRequest: true, Resource: "pods", Namespace: "default"}, "",
			`pods is forbidden: User "x" cannot create resource "pods" in API group "" in the namespace "default"`},
		{"named get with group", Attributes{User: x, Verb: "get", ResourceRequest: true, APIGroup: "apps", Resource: "deployments", Namespace: "prod", Name: "web"}, "",
			`deployments.apps "web" is forbidden: User "x" cannot get resource "deployments" in API group "apps" in the namespace "prod"`},
		{"cluster scope", Attributes{User: x, Verb: "list", ResourceRequest: true, Resource: "nodes"}, "",
			`nodes is forbidden: User "x" cannot list resource "nodes" in API group "" at the cluster scope`},
		{"subresource with a reason", Attributes{User: x, Verb: "update", ResourceRequest: true, Resource: "pods", Subresource: "status", Namespace: "default", Name: "web"}, "no relationship found",
			`pods "web" is forbidden: User "x" cannot update resource "pods/status" in API group "" in the namespace "default": no relationship found`},
		{"non-resource path", Attributes{User: x, Verb: "get", Path: "/apis"}, "",
			`forbidden: User "x" cannot get path "/apis"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			se := Forbidden(tt.a, tt.reason)
			if se.Status().GetMessage() != tt.want || se.Status().GetCode() != 403 || !apierrors.IsForbidden(se) {
				t.Fatalf("got %d %q\nwant 403 %q", se.Status().GetCode(), se.Status().GetMessage(), tt.want)
			}
		})
	}
}

func fixed(d Decision, reason string) Authorizer {
	return Func(func(context.Context, Attributes) (Decision, string, error) { return d, reason, nil })
}

func TestUnionAndCheck(t *testing.T) {
	a := Attributes{User: &request.User{Name: "x"}, Verb: "get", ResourceRequest: true, Resource: "pods", Namespace: "ns"}
	tests := []struct {
		name       string
		u          Union
		want       Decision
		wantReason string
	}{
		{"first allow wins", Union{fixed(NoOpinion, "a"), fixed(Allow, "ok"), fixed(Deny, "never asked")}, Allow, "ok"},
		{"deny stops", Union{fixed(Deny, "no"), fixed(Allow, "never asked")}, Deny, "no"},
		{"no opinions join their reasons", Union{fixed(NoOpinion, "a"), fixed(NoOpinion, ""), fixed(NoOpinion, "b")}, NoOpinion, "a, b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, reason, err := tt.u.Authorize(context.Background(), a)
			if err != nil || d != tt.want || reason != tt.wantReason {
				t.Fatalf("got %v %q %v", d, reason, err)
			}
			err = Check(context.Background(), tt.u, a)
			if (err == nil) != (tt.want == Allow) {
				t.Fatalf("Check = %v", err)
			}
		})
	}
	failing := Func(func(context.Context, Attributes) (Decision, string, error) { return NoOpinion, "", errors.New("boom") })
	if err := Check(context.Background(), Union{failing}, a); apierrors.ReasonForError(err) != apierrors.ReasonInternalError {
		t.Fatalf("an authorizer failure is an internal error, got %v", err)
	}
}

func TestPrivilegedGroups(t *testing.T) {
	z := PrivilegedGroups(request.Masters)
	admin := Attributes{User: &request.User{Name: "a", Groups: []string{request.Masters}}, Verb: "delete", ResourceRequest: true, Resource: "nodes"}
	if d, _, _ := z.Authorize(context.Background(), admin); d != Allow {
		t.Fatalf("system:masters: %v", d)
	}
	admin.User = &request.User{Name: "a", Groups: []string{"devs"}}
	if d, _, _ := z.Authorize(context.Background(), admin); d != NoOpinion {
		t.Fatalf("devs: %v", d)
	}
}
