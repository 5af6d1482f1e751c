// Package test holds the apiserver's integration tests: a real apiserver on
// an embedded etcd, driven through the typed gRPC client and over REST.
package test
