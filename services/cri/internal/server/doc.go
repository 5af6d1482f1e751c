// Package server is podline-cri's CRI runtime: k8s.io/cri-api's runtime.v1
// RuntimeService and ImageService on the containerd v2 Go client, in a
// containerd namespace of its own ("podline") so containerd's CRI plugin,
// when it also runs on the node, keeps its "k8s.io" objects apart.
//
// A sandbox is a pause container in a new network namespace that CNI ADD
// (package cni) attached to the pod network, with the resolv.conf, hosts
// and hostname files its containers mount (package sandboxfiles). A
// container joins the sandbox's namespaces and writes its output in the
// CRI log format (package crilog) under the sandbox's log directory.
//
// Everything the runtime knows is kept in containerd: each containerd
// container carries its CRI config as an extension and its runtime state
// (start, exit, pod IPs) as labels, and the in-memory store (store.go) is
// rebuilt from them when podline-cri starts, reattaching the log copiers
// of running containers and the waits on their tasks. Exec, Attach and
// PortForward are served by a CRI streaming server (streaming.go).
package server
