package secureserving

import (
	"context"
	"errors"
	"testing"

	"podline.dev/pkg/apierrors"
)

func TestCheckAnswersKubernetes403And503(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		a    Attributes
		want string
	}{
		{Attributes{User: User{Name: "system:node:n1"}, Verb: "watch", Resource: "pods"},
			`pods is forbidden: User "system:node:n1" cannot watch resource "pods" in API group "" at the cluster scope`},
		{Attributes{User: User{Name: "jane"}, Verb: "list", Group: "apps", Resource: "deployments", Namespace: "default"},
			`deployments.apps is forbidden: User "jane" cannot list resource "deployments" in API group "apps" in the namespace "default"`},
		{Attributes{User: User{Name: "jane"}, Verb: "get", Resource: "nodes", Subresource: "proxy", Name: "n1"},
			`nodes "n1" is forbidden: User "jane" cannot get resource "nodes/proxy" in API group "" at the cluster scope`},
		{Attributes{User: User{Name: "jane"}, Verb: "get", Path: "/metrics"},
			`forbidden: User "jane" cannot get path "/metrics"`},
	} {
		err := Check(ctx, &script{}, tc.a)
		if !apierrors.IsForbidden(err) || apierrors.FromError(err).Status().GetMessage() != tc.want {
			t.Errorf("got %v\nwant 403 %s", err, tc.want)
		}
	}
	if err := Check(ctx, &script{err: errors.New("connection refused")}, Attributes{Verb: "get", Path: "/metrics"}); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("no decision: %v, want 503", err)
	}
	if err := Check(ctx, &script{allowed: map[string]bool{"root": true}}, Attributes{User: User{Name: "root"}, Verb: "get", Path: "/metrics"}); err != nil {
		t.Errorf("allowed: %v", err)
	}
}
