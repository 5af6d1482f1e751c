package replica

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/fields"
	"podline.dev/pkg/grpcdyn"
	"podline.dev/pkg/secureserving"
	"podline.dev/pkg/watchcache"
	_ "podline.dev/proto/all" // every kind's Go type
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/watchcache/internal/feed"
	"podline.dev/services/watchcache/internal/serve"
)

// Config is what a replica needs.
type Config struct {
	// NATSURL is the NATS server with the apiserver's JetStream stream.
	NATSURL string
	// NATSTLS, when set, makes the NATS connection TLS with this CA and
	// client certificate, whatever NATSURL's scheme.
	NATSTLS *tls.Config
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
	// Authorizer decides every List and Watch of a client authenticated by
	// its TLS certificate; nil serves every client, for a replica without
	// client authentication.
	Authorizer secureserving.Authorizer
	// NATSGrace is how long NATS may be unreachable before the replica
	// stops serving (DefaultNATSGrace).
	NATSGrace time.Duration
}

// DefaultNATSGrace lets a NATS reconnect (a restart, a blip) pass without
// closing every watch; longer, the replica's caches fall behind unseen.
const DefaultNATSGrace = 2 * time.Second

// checkEvery is how often the replica looks at NATS and its feeders.
const checkEvery = 50 * time.Millisecond

// Replica is a running watchcache replica.
type Replica struct {
	nc         *nats.Conn
	grpc       *grpc.Server
	health     *health.Server
	resources  []resource
	authorizer secureserving.Authorizer
	grace      time.Duration

	natsDownSince atomic.Int64 // UnixNano; 0 while NATS is connected
	natsLost      atomic.Bool  // down past the grace: the feeders resync when it is back

	mu      sync.Mutex
	serving bool
	stopped chan struct{} // closed when the current serving period ends
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
	opts := append([]grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler())}, grpcdyn.ServerCodec())
	r := &Replica{grpc: grpc.NewServer(append(opts, cfg.ServerOptions...)...), health: health.NewServer(),
		authorizer: cfg.Authorizer, grace: cfg.NATSGrace}
	if r.grace <= 0 {
		r.grace = DefaultNATSGrace
	}
	r.natsDownSince.Store(time.Now().UnixNano())
	r.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(r.grpc, r.health)
	natsOpts := []nats.Option{nats.Name("watchcache " + cfg.Name), nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true), nats.ReconnectWait(250 * time.Millisecond)}
	if cfg.NATSTLS != nil {
		natsOpts = append(natsOpts, nats.Secure(cfg.NATSTLS))
	}
	nc, err := nats.Connect(cfg.NATSURL, natsOpts...)
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
	if err := serve.Register(r.grpc, served, gate{r}); err != nil {
		nc.Close()
		return nil, err
	}
	return r, nil
}

// gate is the replica as package serve asks it.
type gate struct{ r *Replica }

func (g gate) Serving() (<-chan struct{}, error) { return g.r.update() }

func (g gate) Admit(ctx context.Context, res apis.Resource, verb string, req *metav1.ListRequest) error {
	return admit(ctx, g.r.authorizer, res, verb, req)
}

// Run feeds the caches, watches NATS and sends due bookmarks until ctx
// ends, then closes the NATS connection.
func (r *Replica) Run(ctx context.Context) {
	for _, rs := range r.resources {
		go rs.feeder.Run(ctx)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	check := time.NewTicker(checkEvery)
	defer check.Stop()
	defer r.nc.Close()
	defer r.health.Shutdown()
	for {
		select {
		case <-ctx.Done():
			return
		case <-check.C:
			r.checkNATS(time.Now())
			_, _ = r.update()
		case <-tick.C:
			for _, rs := range r.resources {
				rs.cache.Tick()
			}
		}
	}
}

// checkNATS notices NATS gone past the grace (the caches may miss events
// from then on: every feeder resyncs) and back (the feeders start over
// at once instead of after their backoff).
func (r *Replica) checkNATS(now time.Time) {
	if r.nc.Status() == nats.CONNECTED {
		r.natsDownSince.Store(0)
		if r.natsLost.Swap(false) {
			slog.Info("watchcache: NATS is back; resyncing every cache")
			r.resyncAll()
		}
		return
	}
	if r.natsDownSince.CompareAndSwap(0, now.UnixNano()) || r.natsLost.Load() {
		return
	}
	if now.Sub(time.Unix(0, r.natsDownSince.Load())) >= r.grace {
		r.natsLost.Store(true)
		slog.Warn("watchcache: NATS unreachable; not serving until it is back and every cache caught up", "grace", r.grace, "status", r.nc.Status().String())
		r.resyncAll()
	}
}

func (r *Replica) resyncAll() {
	for _, rs := range r.resources {
		rs.feeder.Resync()
	}
}

// update moves the replica into or out of serving as Ready says, and
// returns the channel that closes when the serving period ends, or the
// 503 of a replica that does not serve. Leaving serving closes the
// channel, so every open watch ends with 503 and its client watches again
// elsewhere (pkg/client falls back to the apiserver).
func (r *Replica) update() (<-chan struct{}, error) {
	err := r.Ready()
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil && !r.serving:
		r.serving, r.stopped = true, make(chan struct{})
		r.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
		slog.Info("watchcache: serving")
	case err != nil && r.serving:
		r.serving = false
		close(r.stopped)
		r.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
		slog.Warn("watchcache: stopped serving; open watches end with 503", "err", err)
	}
	if err != nil {
		return nil, apierrors.NewServiceUnavailable("watchcache replica not ready: " + err.Error())
	}
	return r.stopped, nil
}

// ServeGRPC answers List and Watch (and grpc.health.v1) on lis until ctx
// ends.
func (r *Replica) ServeGRPC(ctx context.Context, lis net.Listener) error {
	go func() { <-ctx.Done(); r.grpc.Stop() }()
	return r.grpc.Serve(lis)
}

// Ready says whether the replica may serve: NATS reachable (or away for
// less than the grace) and every cache current.
func (r *Replica) Ready() error {
	if r.natsLost.Load() {
		return fmt.Errorf("nats unreachable for more than %s", r.grace)
	}
	for _, rs := range r.resources {
		select {
		case <-rs.feeder.Synced():
		default:
			return fmt.Errorf("cache of %s not synced", rs.res.GroupResource())
		}
		if !rs.feeder.Current() {
			return fmt.Errorf("cache of %s catching up", rs.res.GroupResource())
		}
	}
	return nil
}

// WaitReady blocks until the replica serves or ctx ends.
func (r *Replica) WaitReady(ctx context.Context) error {
	for {
		_, err := r.update()
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

// HealthHandler serves /healthz, /livez and /readyz: no object data, for
// anyone (compose's healthcheck).
func (r *Replica) HealthHandler() http.Handler {
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }
	mux.HandleFunc("/healthz", ok)
	mux.HandleFunc("/livez", ok)
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := r.Ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	return mux
}
