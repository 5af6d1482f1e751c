// Package registry implements the API rules that sit between a request and
// storage, once for every resource: server-set metadata (uid,
// creationTimestamp, generateName, generation bumped on spec change only),
// the status subresource, preconditions on resourceVersion (409 Conflict),
// graceful deletion and finalizers, propagation policies, label and field
// selectors, paging, and watch from the resource's watch cache. Patches
// (patch.go: merge, JSON, strategic merge, server-side apply), the scale
// subresource (scale.go), deletecollection, dry runs and managedFields per
// field manager (managedfields.go) go through the same update path as a
// PUT, so they are validated and admitted alike. What differs
// between kinds lives in a small Strategy (pods start Pending and delete
// gracefully once bound; namespaces start Active).
package registry
