package rbac

import (
	"context"
	"fmt"

	rbacv1 "podline.dev/proto/rbac/v1"
	"podline.dev/services/apiserver/internal/authz"
	"podline.dev/services/apiserver/internal/request"
)

// Subject kinds and the API group of roles.
const (
	UserKind           = "User"
	GroupKind          = "Group"
	ServiceAccountKind = "ServiceAccount"
	RoleKind           = "Role"
	ClusterRoleKind    = "ClusterRole"
	GroupName          = "rbac.authorization.k8s.io"
)

// Lister is what the authorizer reads. Returned objects are shared and
// must not be changed.
type Lister interface {
	Role(namespace, name string) (*rbacv1.Role, bool)
	ClusterRole(name string) (*rbacv1.ClusterRole, bool)
	RoleBindings(namespace string) []*rbacv1.RoleBinding
	ClusterRoleBindings() []*rbacv1.ClusterRoleBinding
}

// Authorizer is the RBAC authorizer.
type Authorizer struct{ lister Lister }

var _ authz.Authorizer = (*Authorizer)(nil)

// New evaluates requests against l.
func New(l Lister) *Authorizer { return &Authorizer{lister: l} }

// Authorize allows a request some binding grants; otherwise it has no
// opinion (RBAC never denies), as Kubernetes' RBAC authorizer.
func (z *Authorizer) Authorize(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
	if a.User == nil {
		return authz.NoOpinion, "", nil
	}
	for _, b := range z.lister.ClusterRoleBindings() {
		if !appliesTo(a.User, b.GetSubjects(), "") {
			continue
		}
		if z.refAllows(a, b.GetRoleRef(), "") {
			return authz.Allow, fmt.Sprintf("RBAC: allowed by ClusterRoleBinding %q of ClusterRole %q", b.GetMetadata().GetName(), b.GetRoleRef().GetName()), nil
		}
	}
	if a.Namespace == "" {
		return authz.NoOpinion, "", nil
	}
	for _, b := range z.lister.RoleBindings(a.Namespace) {
		if !appliesTo(a.User, b.GetSubjects(), a.Namespace) {
			continue
		}
		if z.refAllows(a, b.GetRoleRef(), a.Namespace) {
			return authz.Allow, fmt.Sprintf("RBAC: allowed by RoleBinding %q of %s %q to %s", b.GetMetadata().GetName(), b.GetRoleRef().GetKind(), b.GetRoleRef().GetName(), a.User.Name), nil
		}
	}
	return authz.NoOpinion, "", nil
}

// refAllows resolves a roleRef (a Role only inside a RoleBinding's
// namespace) and checks its rules.
func (z *Authorizer) refAllows(a authz.Attributes, ref *rbacv1.RoleRef, namespace string) bool {
	return RulesAllow(a, z.refRules(ref, namespace))
}

// appliesTo reports whether u is one of subjects; a ServiceAccount subject
// without a namespace means the binding's namespace.
func appliesTo(u *request.User, subjects []*rbacv1.Subject, bindingNamespace string) bool {
	for _, s := range subjects {
		switch s.GetKind() {
		case UserKind:
			if u.Name == s.GetName() {
				return true
			}
		case GroupKind:
			if u.InGroup(s.GetName()) {
				return true
			}
		case ServiceAccountKind:
			ns := s.GetNamespace()
			if ns == "" {
				ns = bindingNamespace
			}
			if ns != "" && u.Name == "system:serviceaccount:"+ns+":"+s.GetName() {
				return true
			}
		}
	}
	return false
}

// RulesFor lists the rules the user's bindings grant in namespace
// (cluster-wide ones included), as a rules review reports them.
func (z *Authorizer) RulesFor(u *request.User, namespace string) []*rbacv1.PolicyRule {
	var out []*rbacv1.PolicyRule
	for _, b := range z.lister.ClusterRoleBindings() {
		if appliesTo(u, b.GetSubjects(), "") {
			out = append(out, z.refRules(b.GetRoleRef(), "")...)
		}
	}
	if namespace == "" {
		return out
	}
	for _, b := range z.lister.RoleBindings(namespace) {
		if appliesTo(u, b.GetSubjects(), namespace) {
			out = append(out, z.refRules(b.GetRoleRef(), namespace)...)
		}
	}
	return out
}

func (z *Authorizer) refRules(ref *rbacv1.RoleRef, namespace string) []*rbacv1.PolicyRule {
	switch ref.GetKind() {
	case ClusterRoleKind:
		if r, ok := z.lister.ClusterRole(ref.GetName()); ok {
			return r.GetRules()
		}
	case RoleKind:
		if r, ok := z.lister.Role(namespace, ref.GetName()); ok && namespace != "" {
			return r.GetRules()
		}
	}
	return nil
}
