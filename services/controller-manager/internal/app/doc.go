// Package app is the controller-manager put together: the registry of
// controllers (one Name and New per package under internal/controller),
// the selection of those to run (--controllers), one informer factory and
// one event recorder per component shared by all of them, and the leader
// election (Lease kube-system/kube-controller-manager) behind which they
// run. cmd/controller-manager parses flags into a Config and calls Run; the
// integration tests and the benchmark call Run in-process.
package app
