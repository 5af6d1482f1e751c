package app

import (
	"context"

	"podline.dev/pkg/client/record"
	"podline.dev/services/controller-manager/internal/controller"
	"podline.dev/services/controller-manager/internal/controller/deployment"
	"podline.dev/services/controller-manager/internal/controller/endpointslice"
	"podline.dev/services/controller-manager/internal/controller/garbagecollector"
	"podline.dev/services/controller-manager/internal/controller/namespace"
	"podline.dev/services/controller-manager/internal/controller/nodelifecycle"
	"podline.dev/services/controller-manager/internal/controller/replicaset"
)

// Runnable is a built controller.
type Runnable interface {
	// Run works until ctx is done with the given number of workers.
	Run(ctx context.Context, workers int) error
}

// Factory builds a controller from the shared context.
type Factory func(c *controller.Context) (Runnable, error)

// Every controller is a Runnable, and pkg/client/record's recorder is what
// the controllers record events with.
var (
	_ Runnable                 = (*deployment.Controller)(nil)
	_ Runnable                 = (*replicaset.Controller)(nil)
	_ Runnable                 = (*garbagecollector.Controller)(nil)
	_ Runnable                 = (*endpointslice.Controller)(nil)
	_ Runnable                 = (*nodelifecycle.Controller)(nil)
	_ Runnable                 = (*namespace.Controller)(nil)
	_ controller.EventRecorder = (*record.Recorder)(nil)
)

// Registry holds every controller by name.
var Registry = map[string]Factory{
	deployment.Name:       func(c *controller.Context) (Runnable, error) { return deployment.New(c) },
	replicaset.Name:       func(c *controller.Context) (Runnable, error) { return replicaset.New(c) },
	garbagecollector.Name: func(c *controller.Context) (Runnable, error) { return garbagecollector.New(c) },
	endpointslice.Name:    func(c *controller.Context) (Runnable, error) { return endpointslice.New(c) },
	nodelifecycle.Name:    func(c *controller.Context) (Runnable, error) { return nodelifecycle.New(c) },
	namespace.Name:        func(c *controller.Context) (Runnable, error) { return namespace.New(c) },
}

// DefaultWorkers are kube-controller-manager's --concurrent-* defaults.
func DefaultWorkers() map[string]int {
	return map[string]int{
		deployment.Name:       5,  // --concurrent-deployment-syncs
		replicaset.Name:       5,  // --concurrent-replicaset-syncs
		garbagecollector.Name: 20, // --concurrent-gc-syncs
		endpointslice.Name:    5,  // --concurrent-service-endpoint-syncs
		nodelifecycle.Name:    1,  // the eviction queue
		namespace.Name:        10, // --concurrent-namespace-syncs
	}
}
