package authorize

import (
	"context"
	"fmt"

	"podline.dev/pkg/apierrors"
)

// Attributes are what is authorized: a resource request (Resource set) or
// a non-resource one (Path set, as /metrics).
type Attributes struct {
	User   string
	Groups []string

	Verb          string
	Group         string // API group, "" for core
	Resource      string
	Namespace     string
	FieldSelector string
	LabelSelector string

	Path string
}

// Decision is the apiserver's answer.
type Decision struct {
	Allowed bool
	// Reason explains it (the Node authorizer's "can only list/watch pods
	// with spec.nodeName=... field selector"); it ends the 403 message.
	Reason string
}

// Authorizer decides on one request. Review and Cached are the two.
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (Decision, error)
}

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
// scope: <reason>`.
func Forbidden(a Attributes, reason string) *apierrors.StatusError {
	var msg string
	switch {
	case a.Resource == "":
		msg = fmt.Sprintf("User %q cannot %s path %q", a.User, a.Verb, a.Path)
	case a.Namespace != "":
		msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", a.User, a.Verb, a.Resource, a.Group, a.Namespace)
	default:
		msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", a.User, a.Verb, a.Resource, a.Group)
	}
	if reason != "" {
		msg += ": " + reason
	}
	if a.Resource == "" {
		se := apierrors.NewForbidden(apierrors.GroupResource{}, "", msg)
		se.ErrStatus.Message = "forbidden: " + msg
		return se
	}
	return apierrors.NewForbidden(apierrors.GroupResource{Group: a.Group, Resource: a.Resource}, "", msg)
}
