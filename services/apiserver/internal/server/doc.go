// Package server assembles the apiserver: one registry and watch cache per
// resource over the etcd store, the gRPC services, the REST gateway over an
// in-process gRPC connection, the compactor, and one listener that serves
// gRPC and REST on the same port as kube-apiserver serves both its APIs.
package server
