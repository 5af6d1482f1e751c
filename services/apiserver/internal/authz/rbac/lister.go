package rbac

import (
	rbacv1 "podline.dev/proto/rbac/v1"
	"podline.dev/services/apiserver/internal/authz/cache"
)

// CacheLister reads roles and bindings from the apiserver's caches.
type CacheLister struct {
	roles, clusterRoles, roleBindings, clusterRoleBindings *cache.Cache
}

// NewCacheLister reads from the caches of the four RBAC kinds.
func NewCacheLister(roles, clusterRoles, roleBindings, clusterRoleBindings *cache.Cache) *CacheLister {
	return &CacheLister{roles: roles, clusterRoles: clusterRoles, roleBindings: roleBindings, clusterRoleBindings: clusterRoleBindings}
}

var _ Lister = (*CacheLister)(nil)

// Role implements Lister.
func (l *CacheLister) Role(namespace, name string) (*rbacv1.Role, bool) {
	obj, ok := l.roles.Get(namespace, name)
	r, _ := obj.(*rbacv1.Role)
	return r, ok && r != nil
}

// ClusterRole implements Lister.
func (l *CacheLister) ClusterRole(name string) (*rbacv1.ClusterRole, bool) {
	obj, ok := l.clusterRoles.Get("", name)
	r, _ := obj.(*rbacv1.ClusterRole)
	return r, ok && r != nil
}

// RoleBindings implements Lister.
func (l *CacheLister) RoleBindings(namespace string) []*rbacv1.RoleBinding {
	objs := l.roleBindings.InNamespace(namespace)
	out := make([]*rbacv1.RoleBinding, 0, len(objs))
	for _, o := range objs {
		if b, ok := o.(*rbacv1.RoleBinding); ok {
			out = append(out, b)
		}
	}
	return out
}

// ClusterRoleBindings implements Lister.
func (l *CacheLister) ClusterRoleBindings() []*rbacv1.ClusterRoleBinding {
	objs := l.clusterRoleBindings.List()
	out := make([]*rbacv1.ClusterRoleBinding, 0, len(objs))
	for _, o := range objs {
		if b, ok := o.(*rbacv1.ClusterRoleBinding); ok {
			out = append(out, b)
		}
	}
	return out
}

// StaticLister is an in-memory Lister (tests, and the bootstrap policy
// before the caches have synced).
type StaticLister struct {
	RoleList               []*rbacv1.Role
	ClusterRoleList        []*rbacv1.ClusterRole
	RoleBindingList        []*rbacv1.RoleBinding
	ClusterRoleBindingList []*rbacv1.ClusterRoleBinding
}

var _ Lister = (*StaticLister)(nil)

// Role implements Lister.
func (l *StaticLister) Role(namespace, name string) (*rbacv1.Role, bool) {
	for _, r := range l.RoleList {
		if r.GetMetadata().GetNamespace() == namespace && r.GetMetadata().GetName() == name {
			return r, true
		}
	}
	return nil, false
}

// ClusterRole implements Lister.
func (l *StaticLister) ClusterRole(name string) (*rbacv1.ClusterRole, bool) {
	for _, r := range l.ClusterRoleList {
		if r.GetMetadata().GetName() == name {
			return r, true
		}
	}
	return nil, false
}

// RoleBindings implements Lister.
func (l *StaticLister) RoleBindings(namespace string) []*rbacv1.RoleBinding {
	var out []*rbacv1.RoleBinding
	for _, b := range l.RoleBindingList {
		if b.GetMetadata().GetNamespace() == namespace {
			out = append(out, b)
		}
	}
	return out
}

// ClusterRoleBindings implements Lister.
func (l *StaticLister) ClusterRoleBindings() []*rbacv1.ClusterRoleBinding {
	return l.ClusterRoleBindingList
}
