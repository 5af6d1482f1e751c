// Package resourcequota is Kubernetes' resourcequota controller: it keeps
// every ResourceQuota's status.hard equal to spec.hard and status.used
// equal to what its namespace holds, for the resources podline measures
// (pkg/quota: the pod count and pods' CPU and memory requests and limits,
// and count/<resource> of every namespaced kind the controller-manager
// informs on). The apiserver's quota admission charges each create to
// status.used; this controller gives back what deleted objects and pods
// that finished or are stuck terminating no longer use, and recomputes
// every quota on a full resync (--resource-quota-sync-period, 5 min), which
// also corrects charges for creates that failed after admission.
//
// As in Kubernetes, a quota is synced when it is created or its spec.hard
// changes (not on its own status writes), when a pod of its namespace
// finishes or is deleted and an object it counts is deleted; a create
// does not trigger a sync, since admission has already charged it and a
// recomputation from a cache that lags admission would undercount.
// Usage is read from the informers' caches.
package resourcequota
