// Package framework is the scheduling framework's vocabulary, as in
// kube-scheduler's pkg/scheduler/framework: the extension points a plugin
// may implement (PreEnqueue, QueueSort, PreFilter, Filter, PostFilter,
// PreScore, Score with NormalizeScore, Reserve/Unreserve, Permit, PreBind,
// Bind, PostBind), the Status a plugin returns (a Code and reasons, never a
// bare error), the per-Pod CycleState, and the cluster state plugins read:
// NodeInfo (a Node with the pods on it and what they request) in a
// Snapshot taken once per scheduling cycle. It also defines the cluster
// events plugins register so the queue knows when an unschedulable Pod may
// fit again, and FitError, whose message is Kubernetes' "0/3 nodes are
// available: ..." text.
//
// Nothing here does I/O: package runtime runs plugins, package cache keeps
// NodeInfos, and package scheduler talks to the apiserver.
package framework
