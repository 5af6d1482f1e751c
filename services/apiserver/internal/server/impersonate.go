package server

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"podline.dev/pkg/apierrors"
	"podline.dev/services/apiserver/internal/authn"
	"podline.dev/services/apiserver/internal/authz"
	"podline.dev/services/apiserver/internal/request"
)

// Kubernetes' impersonation headers (kubectl --as, --as-group, --as-uid).
const (
	impersonateUser        = "Impersonate-User"
	impersonateGroup       = "Impersonate-Group"
	impersonateUID         = "Impersonate-Uid"
	impersonateExtraPrefix = "Impersonate-Extra-"
)

// impersonate returns the user a request acts as: the requester, or, with
// Impersonate-* headers, the user they name, once the requester is allowed
// to impersonate each part (verb "impersonate" on users or serviceaccounts,
// groups, uids and userextras/<key>, as Kubernetes checks it).
func (s *Server) impersonate(ctx context.Context, r *http.Request, requester *request.User) (*request.User, error) {
	name := r.Header.Get(impersonateUser)
	groups := r.Header.Values(impersonateGroup)
	uid := r.Header.Get(impersonateUID)
	extra := map[string][]string{}
	for k, v := range r.Header {
		if key, ok := strings.CutPrefix(k, impersonateExtraPrefix); ok {
			unescaped, err := url.PathUnescape(key)
			if err != nil {
				return nil, apierrors.NewBadRequest("malformed " + k + " header: " + err.Error())
			}
			extra[strings.ToLower(unescaped)] = v
		}
	}
	if name == "" {
		if len(groups) > 0 || uid != "" || len(extra) > 0 {
			return nil, apierrors.NewBadRequest("impersonating groups, a uid or extra fields requires " + impersonateUser)
		}
		return requester, nil
	}
	check := func(a authz.Attributes) error {
		a.User, a.Verb, a.ResourceRequest = requester, "impersonate", true
		return authz.Check(ctx, s.auth.authorizer, a)
	}
	u := &request.User{Name: name, UID: uid, Groups: slices.Clone(groups)}
	if rest, ok := strings.CutPrefix(name, authn.ServiceAccountUserPrefix); ok {
		ns, sa, _ := strings.Cut(rest, ":")
		if err := check(authz.Attributes{Resource: "serviceaccounts", Namespace: ns, Name: sa}); err != nil {
			return nil, err
		}
		u.Groups = append(u.Groups, authn.ServiceAccountsGroup, authn.ServiceAccountsGroup+":"+ns)
	} else if err := check(authz.Attributes{Resource: "users", Name: name}); err != nil {
		return nil, err
	}
	for _, g := range groups {
		if err := check(authz.Attributes{Resource: "groups", Name: g}); err != nil {
			return nil, err
		}
	}
	if uid != "" {
		if err := check(authz.Attributes{APIGroup: "authentication.k8s.io", Resource: "uids", Name: uid}); err != nil {
			return nil, err
		}
	}
	for k, vals := range extra {
		for _, v := range vals {
			if err := check(authz.Attributes{APIGroup: "authentication.k8s.io", Resource: "userextras", Subresource: k, Name: v}); err != nil {
				return nil, err
			}
		}
	}
	if len(extra) > 0 {
		u.Extra = extra
	}
	if name != request.Anonymous && !u.InGroup(request.AllAuthenticated) {
		u.Groups = append(u.Groups, request.AllAuthenticated)
	}
	return u, nil
}
