package proxier

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"sigs.k8s.io/knftables"

	"podline.dev/pkg/clock"
	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	discoveryv1 "podline.dev/proto/discovery/v1"
	"podline.dev/services/proxy/internal/rules"
)

// TracerName is the proxy's OpenTelemetry tracer.
const TracerName = "podline.dev/proxy"

// Config is the proxier's configuration.
type Config struct {
	// NodeName is this node's name (span attribute, logs).
	NodeName string
	// Node is the node's rule inputs, read at each full sync (the
	// --nodeport-addresses may follow the node's addresses).
	Node func() rules.NodeInfo
	// MinSyncPeriod is the least time between two syncs; changes within
	// it are written together.
	MinSyncPeriod time.Duration
	// SyncPeriod is the longest time between two full syncs.
	SyncPeriod time.Duration
}

// Proxier keeps the table podline-proxy equal to the rules of the Services
// and EndpointSlices in its Source. Event handlers only mark a Service
// dirty (ServiceChanged, SliceChanged); Run syncs, at most once per
// MinSyncPeriod: a partial sync rewrites only the dirty Services' chains
// and elements; a full one (the first, one after a failure, and one every
// SyncPeriod) rewrites everything and removes what it does not know.
type Proxier struct {
	cfg     Config
	nft     knftables.Interface
	src     Source
	clock   clock.Clock
	log     *slog.Logger
	metrics *Metrics

	mu          sync.Mutex
	dirty       map[string]bool
	needFull    bool
	lastQueued  time.Time
	lastUpdated time.Time
	trigger     chan struct{}

	// Owned by the syncing goroutine.
	applied    *rules.Ruleset
	node       rules.NodeInfo
	lastFull   time.Time
	programmed map[string]map[string]bool // Service key → ready "ip:port" written
}

// New returns a Proxier writing to nft from src.
func New(cfg Config, nft knftables.Interface, src Source, clk clock.Clock, log *slog.Logger, m *Metrics) *Proxier {
	if cfg.Node == nil {
		cfg.Node = func() rules.NodeInfo { return rules.NodeInfo{} }
	}
	if m == nil {
		m = NewMetrics()
	}
	return &Proxier{
		cfg: cfg, nft: nft, src: src, clock: clk, log: log, metrics: m,
		dirty:      map[string]bool{},
		needFull:   true,
		trigger:    make(chan struct{}, 1),
		programmed: map[string]map[string]bool{},
	}
}

// ServiceChanged marks the Service namespace/name for the next sync.
func (p *Proxier) ServiceChanged(key string) { p.queue(key) }

// SliceChanged marks the Service of sl for the next sync.
func (p *Proxier) SliceChanged(sl *discoveryv1.EndpointSlice) {
	if key := SliceServiceKey(sl); key != "" {
		p.queue(key)
	}
}

func (p *Proxier) queue(key string) {
	p.mu.Lock()
	p.dirty[key] = true
	p.lastQueued = p.clock.Now()
	p.mu.Unlock()
	p.metrics.LastQueued.SetToCurrentTime()
	select {
	case p.trigger <- struct{}{}:
	default:
	}
}

// Run syncs until ctx is done: when something changed, no sooner than
// MinSyncPeriod after the last sync, and fully every SyncPeriod.
func (p *Proxier) Run(ctx context.Context) {
	var last time.Time
	for {
		p.mu.Lock()
		pending := len(p.dirty) > 0 || p.needFull
		p.mu.Unlock()
		if !pending {
			wait := p.cfg.SyncPeriod - p.clock.Since(p.lastFull)
			t := p.clock.NewTimer(max(wait, 0))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-p.trigger:
			case <-t.C():
			}
			t.Stop()
		}
		if wait := p.cfg.MinSyncPeriod - p.clock.Since(last); !last.IsZero() && wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-p.clock.After(wait):
			}
		}
		// Drain a trigger the coming sync covers.
		select {
		case <-p.trigger:
		default:
		}
		last = p.clock.Now()
		if err := p.Sync(ctx); err != nil {
			p.log.Error("sync proxy rules", "node", p.cfg.NodeName, "err", err)
		}
	}
}

// Healthy reports whether the rules are current: a sync has succeeded and
// no change has waited for one longer than twice the SyncPeriod. It
// returns the last successful sync's time.
func (p *Proxier) Healthy() (bool, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lastUpdated.IsZero() {
		return false, p.lastUpdated
	}
	stale := p.lastQueued.After(p.lastUpdated) && p.clock.Since(p.lastQueued) > 2*p.cfg.SyncPeriod
	return !stale, p.lastUpdated
}

// Sync writes the pending changes: fully when due, else only the dirty
// Services. A failed transaction leaves them dirty and makes the next sync
// a full one.
func (p *Proxier) Sync(ctx context.Context) error {
	start := p.clock.Now()
	p.mu.Lock()
	dirty := p.dirty
	p.dirty = map[string]bool{}
	full := p.needFull || p.applied == nil || p.clock.Since(p.lastFull) >= p.cfg.SyncPeriod
	p.needFull = false
	p.mu.Unlock()

	next, keys := p.desired(full, dirty)
	spans := p.startSpans(ctx, keys, next.ready, start)

	tx := p.nft.NewTransaction()
	err := p.write(ctx, tx, full, next.rs, keys)
	if err == nil && tx.NumOperations() > 0 {
		err = p.nft.Run(ctx, tx)
	}
	elapsed := p.clock.Since(start)
	for _, s := range spans {
		s.SetAttributes(attribute.Bool("full", full), attribute.Int("operations", tx.NumOperations()))
		if err != nil {
			s.RecordError(err)
			s.SetStatus(codes.Error, err.Error())
		}
		s.End()
	}
	if err != nil {
		p.metrics.SyncFailures.Inc()
		p.mu.Lock()
		p.needFull = true
		for k := range dirty {
			p.dirty[k] = true
		}
		p.mu.Unlock()
		return fmt.Errorf("%w: %w", ErrSyncFailed, err)
	}
	p.applied = next.rs
	for _, k := range keys {
		if r := next.ready[k]; len(r) > 0 {
			p.programmed[k] = r
		} else {
			delete(p.programmed, k)
		}
	}
	if full {
		p.lastFull = start
	}
	p.metrics.SyncDuration.Observe(elapsed.Seconds())
	if full {
		p.metrics.FullSyncDuration.Observe(elapsed.Seconds())
	} else {
		p.metrics.PartialSyncDuration.Observe(elapsed.Seconds())
	}
	p.metrics.LastSync.SetToCurrentTime()
	p.mu.Lock()
	p.lastUpdated = start
	p.mu.Unlock()
	p.log.Debug("synced proxy rules", "full", full, "services", len(keys), "operations", tx.NumOperations(), "elapsed", elapsed)
	return nil
}

// desiredState is the Ruleset a sync writes and, per Service it looked
// at, the usable endpoints ("ip:port") it programs.
type desiredState struct {
	rs    *rules.Ruleset
	ready map[string]map[string]bool
}

// desired builds the Ruleset: everything on a full sync, else the applied
// one with the dirty Services rebuilt. keys are the Services looked at.
func (p *Proxier) desired(full bool, dirty map[string]bool) (desiredState, []string) {
	st := desiredState{ready: map[string]map[string]bool{}}
	var keys []string
	if full {
		node := p.cfg.Node()
		base, err := rules.BuildBase(node)
		if err != nil {
			p.log.Error("node rules", "node", p.cfg.NodeName, "err", err)
			base, _ = rules.BuildBase(rules.NodeInfo{})
		}
		st.rs = &rules.Ruleset{Base: base, Services: map[string]rules.Fragment{}}
		for _, svc := range p.src.Services() {
			keys = append(keys, object.Key(svc))
		}
		// Services gone since the last sync are looked at too, so that
		// their programmed endpoints are forgotten.
		if p.applied != nil {
			for k := range p.applied.Services {
				keys = append(keys, k)
			}
		}
		keys = append(keys, slices.Collect(maps.Keys(dirty))...)
		slices.Sort(keys)
		keys = slices.Compact(keys)
		p.node = node
	} else {
		st.rs = &rules.Ruleset{Base: p.applied.Base, Services: maps.Clone(p.applied.Services)}
		keys = slices.Sorted(maps.Keys(dirty))
	}
	for _, key := range keys {
		delete(st.rs.Services, key)
		svc, ok := p.src.Service(key)
		if !ok {
			continue
		}
		rs := ServiceFrom(svc, p.src.Slices(key))
		if rs == nil {
			continue
		}
		f, err := rules.BuildService(p.node, rs)
		if err != nil {
			// A bad object is logged and left out, not retried.
			p.log.Error("service rules", "service", key, "err", err)
			continue
		}
		if f != nil {
			st.rs.Services[key] = *f
		}
		ready := map[string]bool{}
		for _, port := range rs.Ports {
			for _, ep := range rules.UsableEndpoints(port.Endpoints) {
				if ep.Ready {
					ready[fmt.Sprintf("%s:%d", ep.IP, ep.Port)] = true
				}
			}
		}
		st.ready[key] = ready
	}
	return st, keys
}

func (p *Proxier) write(ctx context.Context, tx *knftables.Transaction, full bool, next *rules.Ruleset, keys []string) error {
	if !full {
		rules.WriteDiff(tx, p.applied, next, keys)
		return nil
	}
	existing, err := p.nft.ListAll(ctx)
	if err != nil && !knftables.IsNotFound(err) {
		// Listing through netlink fails on a missing table without
		// saying so in a way IsNotFound knows: create it, list again.
		create := p.nft.NewTransaction()
		create.Add(&knftables.Table{})
		if cerr := p.nft.Run(ctx, create); cerr != nil {
			return fmt.Errorf("list table: %w (create: %w)", err, cerr)
		}
		if existing, err = p.nft.ListAll(ctx); err != nil {
			return fmt.Errorf("list table: %w", err)
		}
	}
	rules.WriteFull(tx, next, existing)
	return nil
}

// startSpans starts a SyncProxyRules span, a child of the EndpointSlice's
// traceparent, for each slice of a Service that this sync first programs
// a ready endpoint of: the step where a Pod starts receiving traffic. The
// first sync after the proxy starts programs what was already there and
// starts none.
func (p *Proxier) startSpans(ctx context.Context, keys []string, ready map[string]map[string]bool, start time.Time) []trace.Span {
	if p.applied == nil {
		return nil
	}
	var spans []trace.Span
	for _, key := range keys {
		var fresh []string
		for ep := range ready[key] {
			if !p.programmed[key][ep] {
				fresh = append(fresh, ep)
			}
		}
		if len(fresh) == 0 {
			continue
		}
		for _, sl := range p.src.Slices(key) {
			if sl.GetMetadata().GetAnnotations()[telemetry.TraceparentAnnotation] == "" {
				continue
			}
			var mine []string
			for _, ep := range sl.GetEndpoints() {
				for _, a := range ep.GetAddresses() {
					for _, f := range fresh {
						if ip, _, _ := cut(f); ip == a {
							mine = append(mine, f)
						}
					}
				}
			}
			if len(mine) == 0 {
				continue
			}
			slices.Sort(mine)
			_, span := telemetry.StartFromObject(ctx, sl, TracerName, "SyncProxyRules",
				trace.WithTimestamp(start),
				trace.WithAttributes(
					attribute.String("node", p.cfg.NodeName),
					attribute.String("service", key),
					attribute.String("endpointslice", sl.GetMetadata().GetName()),
					attribute.StringSlice("endpoints", mine)))
			spans = append(spans, span)
		}
	}
	return spans
}

func cut(hostPort string) (string, string, bool) {
	i := len(hostPort) - 1
	for i >= 0 && hostPort[i] != ':' {
		i--
	}
	if i < 0 {
		return hostPort, "", false
	}
	return hostPort[:i], hostPort[i+1:], true
}
