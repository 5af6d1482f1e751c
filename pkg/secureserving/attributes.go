package secureserving

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"podline.dev/pkg/apierrors"
)

// User names and groups the authenticators give requests, as Kubernetes'.
const (
	AnonymousUser       = "system:anonymous"
	UnauthenticatedUser = "system:unauthenticated"
	AuthenticatedGroup  = "system:authenticated"
)

// User is who a request is.
type User struct {
	Name   string
	UID    string
	Groups []string
	// Extra is what the authenticator knows besides (a ServiceAccount
	// token's Pod and Node); it travels on to the authorizer, whose
	// answer may depend on it.
	Extra map[string][]string
}

// Attributes are what is authorized: a verb on a resource (Resource set)
// or on a non-resource path (Path set, as /metrics).
type Attributes struct {
	User User
	Verb string

	Group         string // API group, "" for core
	Resource      string
	Subresource   string
	Name          string
	Namespace     string
	FieldSelector string
	LabelSelector string

	Path string
}

// NonResource are the attributes Kubernetes gives a request for a path
// outside the API: the lowercased method as the verb, on the URL's path.
func NonResource(u User, r *http.Request) Attributes {
	return Attributes{User: u, Verb: strings.ToLower(r.Method), Path: r.URL.Path}
}

// Decision is the apiserver's answer.
type Decision struct {
	Allowed bool
	// Reason explains it (the Node authorizer's "can only list/watch pods
	// with spec.nodeName=... field selector"); it ends the 403 message.
	Reason string
}

// Authorizer decides on one request. SubjectAccessReviews and
// CachedAuthorizer are the two.
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (Decision, error)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, a Attributes) (Decision, error)

// Authorize calls f.
func (f AuthorizerFunc) Authorize(ctx context.Context, a Attributes) (Decision, error) {
	return f(ctx, a)
}

// AlwaysAllow allows every authenticated request (a kubelet's
// --authorization-mode=AlwaysAllow).
var AlwaysAllow Authorizer = AuthorizerFunc(func(context.Context, Attributes) (Decision, error) {
	return Decision{Allowed: true}, nil
})

// Check authorizes a: nil when allowed, else the 403 Kubernetes answers
// for the same request, or a 503 when no decision could be had.
func Check(ctx context.Context, z Authorizer, a Attributes) error {
	d, err := z.Authorize(ctx, a)
	if err != nil {
		return apierrors.NewServiceUnavailable("authorization: " + err.Error())
	}
	if d.Allowed {
		return nil
	}
	return Forbidden(a, d.Reason)
}

// Forbidden is Kubernetes' 403 for a refused request: `pods is forbidden:
// User "x" cannot watch resource "pods" in API group "" at the cluster
// scope: <reason>`, or `forbidden: User "x" cannot get path "/metrics"`.
func Forbidden(a Attributes, reason string) *apierrors.StatusError {
	var msg string
	resource := a.Resource
	if a.Subresource != "" {
		resource += "/" + a.Subresource
	}
	switch {
	case a.Resource == "":
		msg = fmt.Sprintf("User %q cannot %s path %q", a.User.Name, a.Verb, a.Path)
	case a.Namespace != "":
		msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", a.User.Name, a.Verb, resource, a.Group, a.Namespace)
	default:
		msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", a.User.Name, a.Verb, resource, a.Group)
	}
	if reason != "" {
		msg += ": " + reason
	}
	if a.Resource == "" {
		se := apierrors.NewForbidden(apierrors.GroupResource{}, "", msg)
		se.ErrStatus.Message = "forbidden: " + msg
		return se
	}
	return apierrors.NewForbidden(apierrors.GroupResource{Group: a.Group, Resource: a.Resource}, a.Name, msg)
}
