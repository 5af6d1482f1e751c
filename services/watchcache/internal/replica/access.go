package replica

import (
	"context"
	"slices"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"podline.dev/pkg/apierrors"
	"podline.dev/proto/apis"
)

// Access says who may read through the replica. The replica authenticates
// clients by their TLS client certificate (CN the user, O the groups, as
// the apiserver does) when it serves TLS with a client CA; it does not
// evaluate each user's RBAC rules, so it admits only the listed users and
// groups: the control-plane components, which may read every object
// anyway. Empty lists admit every client.
type Access struct {
	Users, Groups []string
}

func (a Access) open() bool { return len(a.Users) == 0 && len(a.Groups) == 0 }

// check admits ctx's peer to read res, or returns 403.
func (a Access) check(ctx context.Context, res apis.Resource) error {
	if a.open() {
		return nil
	}
	user, groups := "system:anonymous", []string{"system:unauthenticated"}
	if p, ok := peer.FromContext(ctx); ok {
		if info, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(info.State.VerifiedChains) > 0 && len(info.State.PeerCertificates) > 0 {
			cert := info.State.PeerCertificates[0]
			user, groups = cert.Subject.CommonName, cert.Subject.Organization
		}
	}
	if slices.Contains(a.Users, user) || slices.ContainsFunc(groups, func(g string) bool { return slices.Contains(a.Groups, g) }) {
		return nil
	}
	return apierrors.NewForbidden(apierrors.GroupResource{Group: res.Group.Name, Resource: res.Name}, "",
		"User \""+user+"\" may not read through a watchcache replica, which admits the control-plane components only; read from the apiserver")
}
