package registry

import (
	"context"
	"errors"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"podline.dev/pkg/fields"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	"podline.dev/pkg/watchcache"
	"podline.dev/proto/apis"
	"podline.dev/services/apiserver/internal/storage"
)

// Cacher keeps a resource's watch cache filled from one etcd watch: it lists
// the prefix at a revision, replaces the cache with it, then applies every
// etcd event after that revision in order. A compacted or broken watch
// makes it list again. Progress notifications move the cache's revision
// when nothing changes, so bookmarks and "wait until fresh" keep moving.
type Cacher struct {
	reg      *Registry
	cache    *watchcache.Cache
	progress time.Duration
	synced   chan struct{}
	sink     EventSink
}

// EventSink is told, in order, everything the cacher does to its cache:
// the NATS publisher hooks the resource's one etcd watch here rather than
// opening another. Calls come from the cacher's goroutine; they must not
// block.
type EventSink interface {
	// Replaced: the cache was (re)listed at revision; events before it
	// may never have been told.
	Replaced(revision int64)
	// Applied: ev is now in the cache.
	Applied(ev watchcache.Event)
	// Progressed: the cache is current to revision without a change.
	Progressed(revision int64)
}

// SetSink makes s hear every change of the cache; call it before Run.
func (c *Cacher) SetSink(s EventSink) { c.sink = s }

// Resource is the resource whose cache this is.
func (c *Cacher) Resource() apis.Resource { return c.reg.Resource }

// EnableWatchCache gives the registry a watch cache fed by etcd; Run starts it.
func (r *Registry) EnableWatchCache(opts ...watchcache.Option) *Cacher {
	opts = append([]watchcache.Option{watchcache.WithExemplar(r.New())}, opts...)
	if trigger := fields.Trigger(r.Resource.Kind); trigger != nil {
		opts = append(opts, watchcache.WithTrigger(trigger))
	}
	r.cache = &Cacher{reg: r, cache: watchcache.New(opts...), progress: time.Second, synced: make(chan struct{})}
	return r.cache
}

// Cache is the watch cache (nil until EnableWatchCache).
func (c *Cacher) Cache() *watchcache.Cache { return c.cache }

// Synced is closed once the cache holds its first list.
func (c *Cacher) Synced() <-chan struct{} { return c.synced }

// Run feeds the cache until ctx ends.
func (c *Cacher) Run(ctx context.Context) {
	first := true
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := c.listAndWatch(ctx, func() {
			if first {
				close(c.synced)
				first = false
			}
			backoff = 100 * time.Millisecond
		})
		if ctx.Err() != nil {
			return
		}
		slog.Warn("watch cache: restarting list and watch", "resource", c.reg.Resource.GroupResource(), "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (c *Cacher) listAndWatch(ctx context.Context, onSynced func()) error {
	r := c.reg
	res, err := r.store.List(ctx, r.prefix(""), r.codec, 0, "", 0, nil)
	if err != nil {
		return err
	}
	c.cache.Replace(res.Items, res.Revision)
	if c.sink != nil {
		c.sink.Replaced(res.Revision)
	}
	onSynced()

	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	client := r.store.Client()
	ch := client.Watch(wctx, r.prefix(""), clientv3.WithPrefix(), clientv3.WithRev(res.Revision+1),
		clientv3.WithPrevKV(), clientv3.WithProgressNotify())
	go c.requestProgress(wctx, client)
	for resp := range ch {
		if err := resp.Err(); err != nil {
			return err
		}
		if resp.IsProgressNotify() {
			c.cache.Progress(resp.Header.Revision)
			if c.sink != nil {
				c.sink.Progressed(resp.Header.Revision)
			}
			continue
		}
		for _, ev := range resp.Events {
			wev, err := c.convert(ev)
			if err != nil {
				slog.Error("watch cache: undecodable value", "key", string(ev.Kv.Key), "err", err)
				continue
			}
			if err := c.cache.Apply(wev); err != nil {
				return err
			}
			if c.sink != nil {
				c.sink.Applied(wev)
			}
		}
	}
	return errors.New("etcd watch channel closed")
}

// requestProgress asks etcd for a progress notification every interval and
// lets the cache send the bookmarks that are due.
func (c *Cacher) requestProgress(ctx context.Context, client *clientv3.Client) {
	t := time.NewTicker(c.progress)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = client.RequestProgress(ctx)
			c.cache.Tick()
		}
	}
}

func (c *Cacher) convert(ev *clientv3.Event) (watchcache.Event, error) {
	codec := c.reg.codec
	out := watchcache.Event{Revision: ev.Kv.ModRevision}
	var prev object.Object
	if ev.PrevKv != nil {
		p, err := codec.Decode(ev.PrevKv.Value, ev.PrevKv.ModRevision)
		if err != nil {
			return out, err
		}
		prev = p
	}
	if ev.Type == clientv3.EventTypeDelete {
		if prev == nil {
			return out, errors.New("delete event without previous value")
		}
		obj := object.Copy(prev)
		storage.SetResourceVersion(obj, ev.Kv.ModRevision)
		out.Type, out.Object, out.PrevObject = watch.Deleted, obj, prev
		return out, nil
	}
	obj, err := codec.Decode(ev.Kv.Value, ev.Kv.ModRevision)
	if err != nil {
		return out, err
	}
	out.Object, out.PrevObject = obj, prev
	if ev.IsCreate() {
		out.Type = watch.Added
	} else {
		out.Type = watch.Modified
	}
	return out, nil
}

// CacheMetrics reports the watch cache's counters.
func (r *Registry) CacheMetrics() watchcache.Metrics { return r.cache.cache.Metrics() }
