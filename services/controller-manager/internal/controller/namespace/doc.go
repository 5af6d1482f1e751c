// Package namespace is the namespace controller: when a Namespace is being
// deleted it sets phase Terminating, deletes everything in it, resource by
// resource, looks again until nothing is left (pods may take their grace
// period, objects may have finalizers), and then finalizes the Namespace by
// removing the "kubernetes" finalizer (from spec.finalizers, where
// Kubernetes keeps it, and from metadata.finalizers, which is what holds a
// Namespace in podline's apiserver). A Namespace deleted outright, with no
// finalizer to hold it, still has its contents deleted once a fresh read
// confirms it is gone.
package namespace
