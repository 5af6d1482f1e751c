// Package server assembles the apiserver: one registry and watch cache per
// resource over the etcd store, the gRPC services, the REST gateway over an
// in-process gRPC connection, the compactor, and the listeners: REST (and,
// for convenience, gRPC over net/http) on the secure port as kube-apiserver
// serves its API, and gRPC on grpc-go's own transport on the gRPC port,
// which podline's components use: it is several times faster for many
// concurrent watch streams.
package server
