// Package cache keeps in-memory copies of the objects the authorizers and
// authenticators read on every request (RBAC roles and bindings, Pods for
// the Node authorizer, ServiceAccounts for token authentication). Each
// Cache is pkg/client/cache's Reflector and Indexer fed by one of the
// apiserver's own registries, so it lists once and then follows the
// registry's watch cache: no etcd read per request, and a new RoleBinding
// is seen as soon as the watch delivers it.
package cache
