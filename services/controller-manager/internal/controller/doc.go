// Package controller holds what the controllers of the controller-manager
// share, as Kubernetes' pkg/controller does: the Context every controller is
// built from (one gRPC connection, one SharedInformerFactory, one clock, one
// event recorder factory), the table of kinds that gives each API resource an
// informer and an untyped client (kinds.go), the worker loop that drains a
// rate-limited workqueue of keys (worker.go), the expectations that keep a
// controller from acting twice on a cache that has not caught up with its own
// writes (expectations.go), the adoption and release of objects by label
// selector (refmanager.go), and helpers about pods and owner references.
//
// Each controller lives in its own package under internal/controller/<name>
// with a Name constant and a New(*Context) factory; internal/app wires them
// through one registry map behind leader election.
package controller
