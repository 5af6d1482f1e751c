// Package kubelet is the node agent: it wires the pod sources (pods bound
// to this node, watched through the apiserver, and static pods from the
// manifest directory) to one pod worker per pod, and implements the
// workers' Syncer: admission on the first sync, the static pod's mirror,
// volumes, the runtime work of kuberuntime, probes, and the status
// computed after every sync and written only when it changed. A relist
// of the runtime (PLEG) wakes a pod's worker when one of its containers
// changes state; housekeeping terminates what runs for pods that no
// longer exist and deletes orphaned mirror pods. Node registration, the
// node's status and its Lease are nodestatus's.
//
// Everything is rebuilt from the apiserver and the runtime on start: the
// runtime's labels say which pod each sandbox and container belongs to,
// so a restarted kubelet adopts what runs instead of restarting it.
//
// The sync of a new pod is a span that continues the pod's trace (its
// traceparent annotation), with child spans for admission, volume setup,
// the sandbox (the runtime's CNI ADD is its child, over gRPC trace
// context), image pulls, container creation and start, and
// the wait until the pod is first ready.
package kubelet
