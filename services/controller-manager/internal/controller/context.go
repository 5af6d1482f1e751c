package controller

import (
	"log/slog"
	"time"

	"google.golang.org/grpc"

	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/client/workqueue"
	"podline.dev/pkg/clock"
)

// Context is what every controller is built from. The controllers of one
// process share its connection, its informer factory (so each resource is
// listed and watched once) and its clock.
type Context struct {
	// Conn reaches the apiserver; every write goes through it.
	Conn grpc.ClientConnInterface
	// Informers is the process's shared informer factory. Controllers ask it
	// for informers in New; the caller starts it after building them.
	Informers *cache.SharedInformerFactory
	// Recorders makes the event recorder of a component
	// ("deployment-controller"); nil discards events.
	Recorders RecorderFactory
	// Clock is the time every controller reads; nil is the wall clock.
	Clock clock.Clock
	// Log is the base logger; nil is slog.Default().
	Log *slog.Logger
	// Options are the tunables of the controllers.
	Options Options
}

// Options are the flags of the controllers, with Kubernetes' defaults from
// DefaultOptions.
type Options struct {
	// NodeMonitorGracePeriod is how long a node may go without renewing its
	// Lease (or posting status) before it is marked Unknown (40 s).
	NodeMonitorGracePeriod time.Duration
	// NodeMonitorPeriod is how often node health is checked (5 s).
	NodeMonitorPeriod time.Duration
	// NodeStartupGracePeriod is the grace of a node that never reported (60 s).
	NodeStartupGracePeriod time.Duration
	// NamespaceRetryPeriod is how soon a terminating namespace is looked at
	// again while its content goes away (5 s).
	NamespaceRetryPeriod time.Duration
	// ReplicaSetBurst caps the pods one ReplicaSet sync creates or deletes (500).
	ReplicaSetBurst int
	// EndpointSliceMaxEndpoints is the number of endpoints per slice (100).
	EndpointSliceMaxEndpoints int
	// RootCA is the cluster CA bundle (PEM) that root-ca-cert-publisher
	// publishes in every namespace; empty leaves that controller off.
	RootCA string
	// ResourceQuotaSyncPeriod is how often every quota's usage is
	// recomputed in full (5 min).
	ResourceQuotaSyncPeriod time.Duration
}

// DefaultOptions are Kubernetes' defaults.
func DefaultOptions() Options {
	return Options{
		NodeMonitorGracePeriod:    40 * time.Second,
		NodeMonitorPeriod:         5 * time.Second,
		NodeStartupGracePeriod:    60 * time.Second,
		NamespaceRetryPeriod:      5 * time.Second,
		ReplicaSetBurst:           500,
		EndpointSliceMaxEndpoints: 100,
		ResourceQuotaSyncPeriod:   5 * time.Minute,
	}
}

// GetClock is the context's clock, the wall clock when unset.
func (c *Context) GetClock() clock.Clock {
	if c.Clock == nil {
		return clock.Real{}
	}
	return c.Clock
}

// Logger is the context's logger for one controller.
func (c *Context) Logger(controller string) *slog.Logger {
	l := c.Log
	if l == nil {
		l = slog.Default()
	}
	return l.With("controller", controller)
}

// Recorder is the event recorder of one component.
func (c *Context) Recorder(component string) EventRecorder {
	if c.Recorders == nil {
		return DiscardRecorder{}
	}
	return c.Recorders(component)
}

// NewQueue is a rate-limited queue of keys on the context's clock, with
// client-go's default controller rate limiter.
func (c *Context) NewQueue() *workqueue.RateLimitingQueue[string] {
	clk := workqueue.WithClock(c.GetClock())
	return workqueue.NewRateLimitingQueue[string](workqueue.DefaultControllerRateLimiter[string](clk), clk)
}
