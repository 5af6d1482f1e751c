package app

import (
	"context"

	"podline.dev/pkg/client/record"
	"podline.dev/services/controller-manager/internal/controller"
	"podline.dev/services/controller-manager/internal/controller/deployment"
	"podline.dev/services/controller-manager/internal/controller/endpoints"
	"podline.dev/services/controller-manager/internal/controller/endpointslice"
	"podline.dev/services/controller-manager/internal/controller/garbagecollector"
	"podline.dev/services/controller-manager/internal/controller/namespace"
	"podline.dev/services/controller-manager/internal/controller/nodelifecycle"
	"podline.dev/services/controller-manager/internal/controller/replicaset"
	"podline.dev/services/controller-manager/internal/controller/resourcequota"
	"podline.dev/services/controller-manager/internal/controller/rootcacert"
	"podline.dev/services/controller-manager/internal/controller/serviceaccount"
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
	_ Runnable                 = (*endpoints.Controller)(nil)
	_ Runnable                 = (*nodelifecycle.Controller)(nil)
	_ Runnable                 = (*namespace.Controller)(nil)
	_ Runnable                 = (*serviceaccount.Controller)(nil)
	_ Runnable                 = (*rootcacert.Controller)(nil)
	_ Runnable                 = (*resourcequota.Controller)(nil)
	_ controller.EventRecorder = (*record.Recorder)(nil)
)

// Registry holds every controller by name.
var Registry = map[string]Factory{
	deployment.Name:       func(c *controller.Context) (Runnable, error) { return deployment.New(c) },
	replicaset.Name:       func(c *controller.Context) (Runnable, error) { return replicaset.New(c) },
	garbagecollector.Name: func(c *controller.Context) (Runnable, error) { return garbagecollector.New(c) },
	endpointslice.Name:    func(c *controller.Context) (Runnable, error) { return endpointslice.New(c) },
	endpoints.Name:        func(c *controller.Context) (Runnable, error) { return endpoints.New(c) },
	nodelifecycle.Name:    func(c *controller.Context) (Runnable, error) { return nodelifecycle.New(c) },
	namespace.Name:        func(c *controller.Context) (Runnable, error) { return namespace.New(c) },
	serviceaccount.Name:   func(c *controller.Context) (Runnable, error) { return serviceaccount.New(c) },
	rootcacert.Name: func(c *controller.Context) (Runnable, error) {
		if c.Options.RootCA == "" {
			return nil, ErrNotConfigured
		}
		return rootcacert.New(c)
	},
	resourcequota.Name: func(c *controller.Context) (Runnable, error) { return resourcequota.New(c) },
}

// DefaultWorkers are kube-controller-manager's --concurrent-* defaults.
func DefaultWorkers() map[string]int {
	return map[string]int{
		deployment.Name:       5,  // --concurrent-deployment-syncs
		replicaset.Name:       5,  // --concurrent-replicaset-syncs
		garbagecollector.Name: 20, // --concurrent-gc-syncs
		endpointslice.Name:    5,  // --concurrent-service-endpoint-syncs
		endpoints.Name:        5,  // --concurrent-endpoint-syncs
		nodelifecycle.Name:    1,  // the eviction queue
		namespace.Name:        10, // --concurrent-namespace-syncs
		serviceaccount.Name:   1,  // as kube-controller-manager runs it
		rootcacert.Name:       1,  // as kube-controller-manager runs it
		resourcequota.Name:    5,  // --concurrent-resource-quota-syncs
	}
}
