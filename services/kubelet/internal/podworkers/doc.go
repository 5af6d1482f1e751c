// Package podworkers runs one goroutine per pod that walks the pod through
// the kubelet's lifecycle, as Kubernetes' pod_workers.go does:
//
//	syncing ──(deleted, removed, or finished)──▶ terminating ──▶ terminated ──▶ finished
//
// While syncing, the worker calls Syncer.SyncPod on every update, on
// Trigger (a container changed, a probe result changed) and every resync
// period, and sooner when a sync asks to be requeued (a backoff ends);
// failed syncs are retried with a growing delay. Updates that arrive while
// a sync runs are coalesced into the next one. Terminating stops the
// containers (SyncTerminatingPod, with the deletion's grace period),
// terminated releases the sandbox, network and volumes and, for a deleted
// API pod, writes the final status and deletes it (SyncTerminatedPod). A
// pod never goes back: a pod that must run again is a new pod (a new UID).
// Time comes from an injected clock.
package podworkers
