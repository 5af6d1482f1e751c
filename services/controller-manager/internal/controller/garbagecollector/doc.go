// Package garbagecollector is Kubernetes' garbage collector for podline:
// it deletes objects whose owners are gone and carries out the three
// propagation policies of a delete.
//
// The graph builder (graph.go) keeps an ownership graph of every object of
// every resource the informers watch, one node per UID with its
// ownerReferences and its dependents, fed by one goroutine from the
// informers' events. An owner that is referenced but not (yet) seen is a
// virtual node, checked against the apiserver. From the graph's changes
// it queues work:
//
//   - attemptToDelete (collector.go) looks at one object: if none of its
//     owners exists (dangling references) it is deleted, with the
//     propagation its own finalizers ask for (background by default); if
//     some owner exists the dangling references are removed instead; if
//     an owner is being deleted in the foreground the object is deleted in
//     the foreground too. An owner in foreground deletion
//     (foregroundDeletion finalizer) loses that finalizer once no
//     dependent with blockOwnerDeletion is left.
//   - attemptToOrphan handles an owner deleted with the orphan finalizer:
//     its dependents lose their ownerReferences to it, then it loses the
//     finalizer.
//
// The apiserver adds those finalizers and the deletionTimestamp on delete
// with propagationPolicy Orphan or Foreground; with Background (the
// default) the owner is removed at once and its dependents are collected
// as dangling.
package garbagecollector
