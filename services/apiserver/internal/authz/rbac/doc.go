// Package rbac is the RBAC authorizer: a request is allowed when a
// ClusterRoleBinding, or a RoleBinding in the request's namespace, binds a
// subject the user matches (User, Group or ServiceAccount) to a Role or
// ClusterRole with a rule covering the request (verbs, apiGroups,
// resources with "res/subresource" and "*/subresource", resourceNames,
// nonResourceURLs with a trailing "*", and "*" anywhere). Roles and
// bindings are read through a Lister, in-memory in tests and backed by the
// apiserver's caches in the server. Bootstrap returns the default policy
// kube-apiserver creates at start.
package rbac
