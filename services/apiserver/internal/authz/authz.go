package authz

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"podline.dev/pkg/apierrors"
	"podline.dev/services/apiserver/internal/request"
)

// Attributes describe one request to authorize.
type Attributes struct {
	User *request.User
	// Verb is get, list, watch, create, update, patch, delete (resource
	// requests) or the lower-case HTTP method (non-resource requests).
	Verb string
	// ResourceRequest is false for paths like /api, /version, /healthz.
	ResourceRequest bool
	APIGroup        string
	Resource        string
	Subresource     string
	Namespace       string
	Name            string
	// FieldSelector is a list or watch's field selector (the Node
	// authorizer lets a kubelet list only its own pods).
	FieldSelector string
	// Path is the request path of a non-resource request.
	Path string
}

// Decision is an authorizer's answer.
type Decision int

const (
	// NoOpinion lets the next authorizer decide; if none allows, the
	// request is refused.
	NoOpinion Decision = iota
	// Allow admits the request.
	Allow
	// Deny refuses it without asking later authorizers.
	Deny
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Deny:
		return "deny"
	}
	return "no-opinion"
}

// Authorizer decides on one request; reason explains a refusal (or names
// what allowed it) and ends up in the Forbidden message and the span.
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (d Decision, reason string, err error)
}

// Func adapts a function to Authorizer.
type Func func(ctx context.Context, a Attributes) (Decision, string, error)

// Authorize calls f.
func (f Func) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	return f(ctx, a)
}

// AlwaysAllow admits everything (--authorization-mode=AlwaysAllow).
var AlwaysAllow Authorizer = Func(func(context.Context, Attributes) (Decision, string, error) {
	return Allow, "", nil
})

// Union asks each authorizer in turn; the first Allow or Deny wins, and the
// reasons of those with no opinion are joined.
type Union []Authorizer

// Authorize implements Authorizer.
func (u Union) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	var reasons []string
	for _, z := range u {
		d, reason, err := z.Authorize(ctx, a)
		if err != nil {
			return Deny, "", err
		}
		if d != NoOpinion {
			return d, reason, nil
		}
		if reason != "" {
			reasons = append(reasons, reason)
		}
	}
	return NoOpinion, strings.Join(reasons, ", "), nil
}

// Check authorizes a under an "authorization" span carrying the user,
// groups, request attributes, decision and reason, and returns nil or the
// Forbidden error the client sees.
func Check(ctx context.Context, z Authorizer, a Attributes) error {
	ctx, span := otel.Tracer("podline.dev/apiserver/authz").Start(ctx, "authorization")
	defer span.End()
	d, reason, err := z.Authorize(ctx, a)
	attrs := []attribute.KeyValue{
		attribute.String("authz.verb", a.Verb),
		attribute.String("authz.decision", d.String()),
		attribute.String("authz.reason", reason),
	}
	if a.User != nil {
		attrs = append(attrs, attribute.String("user.name", a.User.Name), attribute.StringSlice("user.groups", a.User.Groups))
	}
	if a.ResourceRequest {
		attrs = append(attrs, attribute.String("authz.resource", resourceName(a)), attribute.String("authz.namespace", a.Namespace), attribute.String("authz.name", a.Name))
	} else {
		attrs = append(attrs, attribute.String("authz.path", a.Path))
	}
	span.SetAttributes(attrs...)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		return apierrors.NewInternalError(fmt.Errorf("authorization: %w", err))
	}
	if d == Allow {
		return nil
	}
	span.SetStatus(codes.Error, "forbidden")
	return Forbidden(a, reason)
}

func resourceName(a Attributes) string {
	if a.Subresource != "" {
		return a.Resource + "/" + a.Subresource
	}
	return a.Resource
}

// ForbiddenMessage is Kubernetes' text for a refused request.
func ForbiddenMessage(a Attributes) string {
	user := ""
	if a.User != nil {
		user = a.User.Name
	}
	if !a.ResourceRequest {
		return fmt.Sprintf("User %q cannot %s path %q", user, a.Verb, a.Path)
	}
	if a.Namespace != "" {
		return fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", user, a.Verb, resourceName(a), a.APIGroup, a.Namespace)
	}
	return fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", user, a.Verb, resourceName(a), a.APIGroup)
}

// Forbidden is the 403 Status for a refused request: `pods "web" is
// forbidden: User ...`, `pods is forbidden: ...` without a name, and
// `forbidden: User ... path "/apis"` for a non-resource request.
func Forbidden(a Attributes, reason string) *apierrors.StatusError {
	msg := ForbiddenMessage(a)
	if reason != "" {
		msg += ": " + reason
	}
	if !a.ResourceRequest {
		se := apierrors.NewForbidden(apierrors.GroupResource{}, "", msg)
		se.ErrStatus.Message = "forbidden: " + msg
		return se
	}
	return apierrors.NewForbidden(apierrors.GroupResource{Group: a.APIGroup, Resource: a.Resource}, a.Name, msg)
}

// PrivilegedGroups allows every request of a member of one of groups, as
// kube-apiserver does for system:masters before asking any authorizer.
func PrivilegedGroups(groups ...string) Authorizer {
	return Func(func(_ context.Context, a Attributes) (Decision, string, error) {
		if a.User == nil {
			return NoOpinion, "", nil
		}
		for _, g := range groups {
			if a.User.InGroup(g) {
				return Allow, "member of " + g, nil
			}
		}
		return NoOpinion, "", nil
	})
}
