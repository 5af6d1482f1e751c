package replica

import (
	"context"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/secureserving"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
)

// user is the client of ctx as its verified TLS certificate names it (CN
// the user, O the groups, as the apiserver reads it); ok is false without
// one.
func user(ctx context.Context) (name string, groups []string, ok bool) {
	p, found := peer.FromContext(ctx)
	if !found {
		return "", nil, false
	}
	info, isTLS := p.AuthInfo.(credentials.TLSInfo)
	if !isTLS || len(info.State.VerifiedChains) == 0 || len(info.State.PeerCertificates) == 0 {
		return "", nil, false
	}
	cert := info.State.PeerCertificates[0]
	return cert.Subject.CommonName, cert.Subject.Organization, true
}

// admit authorizes a List or Watch as the apiserver would authorize the
// same request, by asking it (z), or admits every client when z is nil.
func admit(ctx context.Context, z secureserving.Authorizer, res apis.Resource, verb string, req *metav1.ListRequest) error {
	if z == nil {
		return nil
	}
	name, groups, ok := user(ctx)
	if !ok {
		return apierrors.NewUnauthorized("")
	}
	a := secureserving.Attributes{User: secureserving.User{Name: name, Groups: append(append([]string(nil), groups...), secureserving.AuthenticatedGroup)}, Verb: verb,
		Group: res.Group.Name, Resource: res.Name, FieldSelector: req.GetFieldSelector(), LabelSelector: req.GetLabelSelector()}
	if res.Namespaced {
		a.Namespace = req.GetNamespace()
	}
	return secureserving.Check(ctx, z, a)
}
