// Package servicealloc gives Services their ClusterIPs and NodePorts, as
// kube-apiserver's Service storage does: the registry of services calls
// BeginCreate and BeginUpdate once a write has passed admission and
// validation, and Release once a Service is gone from etcd. A requested IP
// or port is honoured when free; a taken or out-of-range one is a 422 with
// kube-apiserver's message; anything taken for a write that is then not
// stored is given back. IP family fields are defaulted for a single-stack
// IPv4 cluster. The allocations themselves live in package allocator; this
// package maps a Service onto them, and Repair rebuilds both ranges from the
// stored Services on start and every few minutes.
package servicealloc
