// Package authz decides whether an authenticated user may do what a
// request asks, as kube-apiserver's authorizers do. A request is reduced to
// Attributes (verb, API group, resource, subresource, namespace, name, or a
// non-resource path); a Union of authorizers (the Node authorizer, then
// RBAC) is asked in order and the first Allow or Deny wins. A request no
// one allows is refused with Forbidden, whose message reads like
// Kubernetes': `User "x" cannot create resource "pods" in API group "" in
// the namespace "default"`. The subpackages hold the authorizers (rbac,
// node) and the informer-like cache they read objects from.
package authz
