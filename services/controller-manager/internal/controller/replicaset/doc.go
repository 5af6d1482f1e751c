// Package replicaset is the ReplicaSet controller: it creates and deletes
// Pods so that each ReplicaSet has spec.replicas of them, as Kubernetes'
// does. Pods are made from the template with generateName <rs>-, an
// ownerReference (controller and blockOwnerDeletion true) and the
// traceparent of the sync's span; they are created in slow-start batches
// (1, 2, 4, ...) so a failing apiserver sees one failed call, not hundreds.
// Expectations (controller.Expectations) hold back the next sync of a
// ReplicaSet until the informer has shown its own creations and deletions,
// so a slow watch never makes duplicates. Orphan pods the selector matches
// are adopted and owned pods it no longer matches are released. When
// scaling down it deletes first the pods that matter least (ranking.go:
// unscheduled, pending, not ready, doubled up on a node, recently ready,
// restarting, newest). Status counts replicas, fully labeled, ready and
// available pods, with events SuccessfulCreate and SuccessfulDelete.
package replicaset
