package replica

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/fields"
	"podline.dev/pkg/watchcache"
	_ "podline.dev/proto/all" // every kind's Go type
	"podline.dev/proto/apis"
	"podline.dev/services/watchcache/internal/feed"
	"podline.dev/services/watchcache/internal/serve"
)

// Config is what a replica needs.
type Config struct {
	// NATSURL is the NATS server with the apiserver's JetStream stream.
	NATSURL string
	// Apiserver is a connection to the apiserver's gRPC port, for lists,
	// backfills and forwarded reads.
	Apiserver grpc.ClientConnInterface
	// WatchCache options apply to every resource's cache.
	WatchCache []watchcache.Option
	// Feed options apply to every resource's feeder.
	Feed []feed.Option
	// Name tells replicas apart in NATS and in logs.
	Name string
	// ServerOptions are the gRPC server's (TLS credentials).
	ServerOptions []grpc.ServerOption
	// Access says which clients the replica serves.
	Access Access
}

// Replica is a running watchcache replica.
type Replica struct {
	nc        *nats.Conn
	grpc      *grpc.Server
	resources []resource
}

type resource struct {
	res    apis.Resource
	cache  *watchcache.Cache
	feeder *feed.Feeder
}

// DefaultCapacity is each cache's history: the stream's window at
// podline's write rates (see watchstream.DefaultMaxMsgs).
const DefaultCapacity = 65536

// New connects to NATS (retrying while it is down) and builds the caches
// and services; Run starts feeding them.
func New(cfg Config) (*Replica, error) {
	opts := append([]grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler())}, serve.ServerOptions()...)
	r := &Replica{grpc: grpc.NewServer(append(opts, cfg.ServerOptions...)...)}
	nc, err := nats.Connect(cfg.NATSURL, nats.Name("watchcache "+cfg.Name), nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true), nats.ReconnectWait(250*time.Millisecond))
	if err != nil {
		return nil, fmt.Errorf("replica: nats: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("replica: %w", err)
	}
	r.nc = nc
	var served []serve.Resource
	for _, res := range apis.Resources {
		up, err := client.ForResource(cfg.Apiserver, res)
		if err != nil {
			nc.Close()
			return nil, err
		}
		opts := []watchcache.Option{watchcache.WithCapacity(DefaultCapacity)}
		if trigger := fields.Trigger(res.Kind); trigger != nil {
			opts = append(opts, watchcache.WithTrigger(trigger))
		}
		opts = append(opts, cfg.WatchCache...)
		cache := watchcache.New(opts...)
		f, err := feed.New(res, cache, up, js, cfg.Feed...)
		if err != nil {
			nc.Close()
			return nil, err
		}
		r.resources = append(r.resources, resource{res: res, cache: cache, feeder: f})
		served = append(served, serve.Resource{Res: res, Cache: cache, Up: up})
	}
	admit := func(ctx context.Context, res apis.Resource) error {
		if err := cfg.Access.check(ctx, res); err != nil {
			return err
		}
		if err := r.Ready(); err != nil {
			return apierrors.NewServiceUnavailable("watchcache replica not ready: " + err.Error())
		}
		return nil
	}
	if err := serve.Register(r.grpc, served, admit); err != nil {
		nc.Close()
		return nil, err
	}
	return r, nil
}

// Run feeds the caches and sends due bookmarks until ctx ends, then closes
// the NATS connection.
func (r *Replica) Run(ctx context.Context) {
	for _, rs := range r.resources {
		go rs.feeder.Run(ctx)
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	defer r.nc.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, rs := range r.resources {
				rs.cache.Tick()
			}
		}
	}
}

// ServeGRPC answers List and Watch on lis until ctx ends.
func (r *Replica) ServeGRPC(ctx context.Context, lis net.Listener) error {
	go func() { <-ctx.Done(); r.grpc.Stop() }()
	return r.grpc.Serve(lis)
}

// Ready says whether the replica may serve: NATS connected and every
// cache listed.
func (r *Replica) Ready() error {
	if s := r.nc.Status(); s != nats.CONNECTED {
		return fmt.Errorf("nats is %s", s)
	}
	for _, rs := range r.resources {
		select {
		case <-rs.feeder.Synced():
		default:
			return fmt.Errorf("cache of %s not synced", rs.res.GroupResource())
		}
	}
	return nil
}

// WaitReady blocks until Ready or ctx ends.
func (r *Replica) WaitReady(ctx context.Context) error {
	for {
		err := r.Ready()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stats returns the feeder counters and cache metrics of a resource
// ("pods", "deployments.apps").
func (r *Replica) Stats(groupResource string) (feed.Stats, watchcache.Metrics, bool) {
	for _, rs := range r.resources {
		if rs.res.GroupResource() == groupResource {
			return rs.feeder.Stats(), rs.cache.Metrics(), true
		}
	}
	return feed.Stats{}, watchcache.Metrics{}, false
}

// HTTPHandler serves /healthz, /readyz, /metrics and /debug/pprof/.
func (r *Replica) HTTPHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := r.Ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.Handle("/metrics", r.metricsHandler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	return mux
}
