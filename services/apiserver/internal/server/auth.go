package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	clientcache "podline.dev/pkg/client/cache"
	"podline.dev/pkg/object"
	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
	"podline.dev/services/apiserver/internal/audit"
	"podline.dev/services/apiserver/internal/authn"
	"podline.dev/services/apiserver/internal/authz"
	"podline.dev/services/apiserver/internal/authz/cache"
	"podline.dev/services/apiserver/internal/authz/node"
	"podline.dev/services/apiserver/internal/authz/rbac"
	"podline.dev/services/apiserver/internal/registry"
	"podline.dev/services/apiserver/internal/request"
)

// Authorization modes, as --authorization-mode names them.
const (
	ModeAlwaysAllow = "AlwaysAllow"
	ModeNode        = "Node"
	ModeRBAC        = "RBAC"
)

// AuthConfig turns on authentication and authorization.
type AuthConfig struct {
	// ClientCA verifies client certificates (--client-ca-file).
	ClientCA *x509.CertPool
	// Tokens are static bearer tokens (--token-auth-file), or nil.
	Tokens *authn.StaticTokens
	// ServiceAccountKey verifies ServiceAccount tokens
	// (--service-account-key-file), or nil to accept none.
	ServiceAccountKey *ecdsa.PublicKey
	// ServiceAccountSigningKey signs the tokens of the TokenRequest API
	// (--service-account-signing-key-file), or nil to serve none.
	ServiceAccountSigningKey *ecdsa.PrivateKey
	// ServiceAccountIssuer is the tokens' iss; APIAudiences their accepted
	// aud (default: the issuer).
	ServiceAccountIssuer string
	APIAudiences         []string
	// AuthorizationModes are tried in order (Node, RBAC, AlwaysAllow);
	// system:masters is always allowed.
	AuthorizationModes []string
}

// auth is the running chain: who a request is, what it may do, and the
// audit log of both.
type auth struct {
	authn authn.Chain
	// tokens are authn's bearer-token authenticators, for TokenReviews.
	tokens authn.TokenChain
	// authorizer is nil when only the audit log is on.
	authorizer authz.Authorizer
	audit      *audit.Logger // nil: no audit log
	// rbac lists a user's rules for rules reviews (nil without RBAC).
	rbac *rbac.Authorizer
	// issuer signs TokenRequest tokens for audiences (nil: no TokenRequest).
	issuer    *authn.TokenIssuer
	audiences []string
	caches    []*cache.Cache
	// rbacCaches are Roles, ClusterRoles, RoleBindings, ClusterRoleBindings.
	rbacCaches [4]*cache.Cache
	// secret proves that user metadata on the in-process connection was put
	// there by this process's REST filter, not by a client.
	secret string
}

func (s *Server) newAuth(cfg *AuthConfig, log *audit.Logger) (*auth, error) {
	a := &auth{audit: log}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	a.secret = hex.EncodeToString(b)
	if cfg == nil {
		return a, nil
	}
	newCache := func(resource string, idx clientcache.Indexers) (*cache.Cache, error) {
		reg := s.registries[resource]
		if reg == nil {
			return nil, fmt.Errorf("auth: no registry for %s", resource)
		}
		c := cache.New(resource, reg, idx)
		a.caches = append(a.caches, c)
		return c, nil
	}
	if cfg.ClientCA != nil {
		a.authn = append(a.authn, authn.NewX509(cfg.ClientCA))
	}
	issuer := cfg.ServiceAccountIssuer
	if issuer == "" {
		issuer = authn.DefaultIssuer
	}
	a.audiences = cfg.APIAudiences
	if len(a.audiences) == 0 {
		a.audiences = []string{issuer}
	}
	if cfg.Tokens != nil {
		a.authn = append(a.authn, cfg.Tokens)
		a.tokens = append(a.tokens, authn.AudienceAgnostic(cfg.Tokens, a.audiences))
	}
	// One Pod cache serves the Node authorizer and bound tokens.
	var pods *cache.Cache
	podCache := func() (*cache.Cache, error) {
		if pods != nil {
			return pods, nil
		}
		var err error
		pods, err = newCache("pods", node.Indexers())
		return pods, err
	}
	if cfg.ServiceAccountSigningKey != nil {
		a.issuer = authn.NewTokenIssuer(cfg.ServiceAccountSigningKey, issuer)
	}
	if cfg.ServiceAccountKey != nil {
		sas, err := newCache("serviceaccounts", nil)
		if err != nil {
			return nil, err
		}
		pc, err := podCache()
		if err != nil {
			return nil, err
		}
		sat := authn.NewServiceAccountTokens(cfg.ServiceAccountKey, issuer, a.audiences,
			serviceAccounts{c: sas, live: s.registries["serviceaccounts"], pods: pc, livePod: s.livePod})
		a.authn = append(a.authn, sat)
		a.tokens = append(a.tokens, sat)
	}
	union := authz.Union{authz.PrivilegedGroups(request.Masters)}
	modes := cfg.AuthorizationModes
	if len(modes) == 0 {
		modes = []string{ModeNode, ModeRBAC}
	}
	for _, m := range modes {
		switch m {
		case ModeAlwaysAllow:
			union = append(union, authz.AlwaysAllow)
		case ModeNode:
			pods, err := podCache()
			if err != nil {
				return nil, err
			}
			union = append(union, node.New(node.CacheGraph{Pods: pods, Live: s.livePod}))
		case ModeRBAC:
			cs := &a.rbacCaches
			for i, r := range []string{"roles.rbac.authorization.k8s.io", "clusterroles.rbac.authorization.k8s.io",
				"rolebindings.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io"} {
				c, err := newCache(r, nil)
				if err != nil {
					return nil, err
				}
				cs[i] = c
			}
			a.rbac = rbac.New(rbac.NewCacheLister(cs[0], cs[1], cs[2], cs[3]))
			union = append(union, a.rbac)
		default:
			return nil, fmt.Errorf("auth: unknown authorization mode %q", m)
		}
	}
	a.authorizer = union
	return a, nil
}

// rbacEnabled reports whether the bootstrap policy is needed.
func rbacEnabled(cfg *AuthConfig) bool {
	return cfg != nil && (len(cfg.AuthorizationModes) == 0 || slices.Contains(cfg.AuthorizationModes, ModeRBAC))
}

// synced reports whether every cache holds its first list.
func (a *auth) synced() bool {
	for _, c := range a.caches {
		if !c.HasSynced() {
			return false
		}
	}
	return true
}

func (a *auth) run(ctx context.Context) {
	for _, c := range a.caches {
		go c.Run(ctx)
	}
}

// serviceAccounts looks accounts and the Pods tokens are bound to up for
// token authentication: in the caches, and in storage when a cache has
// not seen the object (yet).
type serviceAccounts struct {
	c       *cache.Cache
	live    *registry.Registry
	pods    *cache.Cache
	livePod func(namespace, name string) (*corev1.Pod, bool)
}

// liveTimeout bounds a storage read made on a cache miss.
const liveTimeout = 5 * time.Second

func (s serviceAccounts) ServiceAccountUID(namespace, name string) (string, bool) {
	obj, ok := s.c.Get(namespace, name)
	if !ok {
		ctx, cancel := context.WithTimeout(context.Background(), liveTimeout)
		defer cancel()
		var err error
		if obj, err = s.live.Get(ctx, namespace, name); err != nil {
			return "", false
		}
	}
	sa, _ := obj.(*corev1.ServiceAccount)
	if sa == nil {
		return "", false
	}
	return sa.GetMetadata().GetUid(), true
}

func (s serviceAccounts) Pod(namespace, name string) (string, time.Time, bool) {
	obj, _ := s.pods.Get(namespace, name)
	p, _ := obj.(*corev1.Pod)
	if p == nil {
		var ok bool
		if p, ok = s.livePod(namespace, name); !ok {
			return "", time.Time{}, false
		}
	}
	var deletion time.Time
	if ts := p.GetMetadata().GetDeletionTimestamp(); ts != nil {
		deletion = time.Unix(ts.GetSeconds(), 0)
	}
	return p.GetMetadata().GetUid(), deletion, true
}

// livePod reads a Pod from storage for the Node authorizer and bound tokens.
func (s *Server) livePod(namespace, name string) (*corev1.Pod, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), liveTimeout)
	defer cancel()
	obj, err := s.registries["pods"].Get(ctx, namespace, name)
	if err != nil {
		return nil, false
	}
	p, ok := obj.(*corev1.Pod)
	return p, ok
}

// servingTLS asks clients for a certificate (verified by the x509
// authenticator, not by the handshake, so a request with a bad certificate
// gets a 401 Status rather than a TLS alert).
func servingTLS(cfg Config) *tls.Config {
	if cfg.TLS == nil || cfg.Auth == nil || cfg.Auth.ClientCA == nil {
		return cfg.TLS
	}
	t := cfg.TLS.Clone()
	t.ClientAuth = tls.RequestClientCert
	return t
}

// bootstrapPolicy creates the default roles and bindings that do not exist
// yet, as kube-apiserver does at start; existing ones are left as they are.
func (s *Server) bootstrapPolicy(ctx context.Context) error {
	p := rbac.Bootstrap()
	var objs []object.Object
	for _, r := range p.ClusterRoles {
		objs = append(objs, r)
	}
	for _, b := range p.ClusterRoleBindings {
		objs = append(objs, b)
	}
	for _, obj := range objs {
		res, ok := apis.ByMessage(string(obj.ProtoReflect().Descriptor().FullName()))
		if !ok {
			return fmt.Errorf("bootstrap policy: %T is not an API kind", obj)
		}
		reg := s.registries[res.GroupResource()]
		if err := s.createRetrying(ctx, reg, obj); err != nil {
			return fmt.Errorf("bootstrap policy %s %s: %w", res.Kind, obj.GetMetadata().GetName(), err)
		}
		if err := reconcileDefault(ctx, reg, obj); err != nil {
			return fmt.Errorf("bootstrap policy %s %s: %w", res.Kind, obj.GetMetadata().GetName(), err)
		}
	}
	return nil
}

// reconcileDefault brings a default role or binding that already exists
// (kept in etcd from an earlier version) to this version's policy, as
// kube-apiserver does at start, unless its
// rbac.authorization.kubernetes.io/autoupdate annotation is "false".
func reconcileDefault(ctx context.Context, reg *registry.Registry, want object.Object) error {
	cur, err := reg.Get(ctx, "", want.GetMetadata().GetName())
	if err != nil {
		return err
	}
	if cur.GetMetadata().GetAnnotations()[autoupdateAnnotation] == "false" {
		return nil
	}
	next := object.Copy(want)
	next.GetMetadata().ResourceVersion = cur.GetMetadata().GetResourceVersion()
	next.GetMetadata().Uid = cur.GetMetadata().GetUid()
	next.GetMetadata().CreationTimestamp = cur.GetMetadata().GetCreationTimestamp()
	if proto.Equal(policyOf(cur), policyOf(next)) {
		return nil
	}
	slog.Info("bootstrap policy: updating to this version's rules", "name", want.GetMetadata().GetName())
	_, err = reg.Update(ctx, "", want.GetMetadata().GetName(), next, false)
	return err
}

const autoupdateAnnotation = "rbac.authorization.kubernetes.io/autoupdate"

// policyOf is the part of a role or binding that the default policy sets.
func policyOf(obj object.Object) proto.Message {
	switch o := obj.(type) {
	case *rbacv1.ClusterRole:
		return &rbacv1.ClusterRole{Rules: o.GetRules()}
	case *rbacv1.ClusterRoleBinding:
		return &rbacv1.ClusterRoleBinding{RoleRef: o.GetRoleRef(), Subjects: o.GetSubjects()}
	}
	return obj
}

// waitAuthSynced returns once the authorizers' caches hold their first lists.
func (s *Server) waitAuthSynced(ctx context.Context) error {
	if s.auth == nil {
		return nil
	}
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for !s.auth.synced() || !s.bootstrapPolicyCached() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// createRetrying creates obj unless it exists, waiting out an etcd outage
// as the namespace bootstrap does.
func (s *Server) createRetrying(ctx context.Context, reg *registry.Registry, obj object.Object) error {
	for {
		_, err := reg.Create(ctx, obj.GetMetadata().GetNamespace(), obj, false)
		if err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		if !apierrors.IsServiceUnavailable(err) || ctx.Err() != nil {
			return err
		}
		slog.Warn("bootstrap: etcd unavailable, retrying", "object", obj.GetMetadata().GetName())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// bootstrapPolicyCached reports whether the RBAC caches hold every
// bootstrap role and binding, so the first requests after start are
// decided on the whole default policy.
func (s *Server) bootstrapPolicyCached() bool {
	if !rbacEnabled(s.cfg.Auth) {
		return true
	}
	p := rbac.Bootstrap()
	roles, bindings := s.auth.rbacCaches[1], s.auth.rbacCaches[3]
	for _, r := range p.ClusterRoles {
		if _, ok := roles.Get("", r.GetMetadata().GetName()); !ok {
			return false
		}
	}
	for _, b := range p.ClusterRoleBindings {
		if _, ok := bindings.Get("", b.GetMetadata().GetName()); !ok {
			return false
		}
	}
	return true
}
