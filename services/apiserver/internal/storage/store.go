package storage

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"podline.dev/pkg/object"
)

var tracer = otel.Tracer("podline.dev/apiserver/storage")

// span starts the span of one etcd operation on key.
func span(ctx context.Context, op, key string) (context.Context, trace.Span) {
	return tracer.Start(ctx, "etcd "+op, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.system", "etcd"), attribute.String("etcd.key", key)))
}

// end records err on sp and ends it.
func end(sp trace.Span, err error) {
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, err.Error())
	}
	sp.End()
}

// MaxEtcdResponseBytes is the largest etcd response the apiserver's client
// accepts: an etcd watch response batches many revisions, each with its
// previous value, and can pass gRPC's 4 MiB default when writes are fast.
const MaxEtcdResponseBytes = 1 << 30

// Store is the generic etcd store of every resource.
type Store struct {
	client *clientv3.Client
	// timeout bounds each etcd call, so a cluster without quorum fails fast
	// with ErrUnavailable instead of hanging the request.
	timeout time.Duration
}

// NewStore returns a store over client; timeout bounds each etcd call (0: 10s).
func NewStore(client *clientv3.Client, timeout time.Duration) *Store {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &Store{client: client, timeout: timeout}
}

// Client is the etcd client, for the compactor and health checks.
func (s *Store) Client() *clientv3.Client { return s.client }

// Create writes obj at key if the key does not exist and returns it with
// its resourceVersion set. obj is the caller's to give: it is not copied.
func (s *Store) Create(ctx context.Context, key string, c Codec, obj object.Object) (out object.Object, err error) {
	ctx, sp := span(ctx, "txn create", key)
	defer func() { end(sp, err) }()
	val, err := c.Encode(obj)
	if err != nil {
		return nil, err
	}
	rev, ok, err := s.txn(ctx, key, clientv3.Compare(clientv3.CreateRevision(key), "=", 0), clientv3.OpPut(key, string(val)), val)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrExists
	}
	sp.SetAttributes(attribute.Int64("etcd.revision", rev))
	SetResourceVersion(obj, rev)
	return obj, nil
}

// Get reads the object at key; rev 0 reads the latest (a quorum read).
func (s *Store) Get(ctx context.Context, key string, c Codec, rev int64) (object.Object, error) {
	var opts []clientv3.OpOption
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	resp, err := s.get(ctx, key, opts...)
	if err != nil {
		return nil, err
	}
	if len(resp.Kvs) == 0 {
		return nil, ErrNotFound
	}
	return c.Decode(resp.Kvs[0].Value, resp.Kvs[0].ModRevision)
}

// UpdateFunc computes the next state from the current one (a read-only
// value: copy before changing it). It returns the new object, or remove=true
// to delete the key instead (a finalized deletion), or an error to abort.
type UpdateFunc func(current object.Object) (next object.Object, remove bool, err error)

// GuaranteedUpdate reads key, applies fn and writes the result if the key is
// still at the revision read; on a race it reads again and reapplies fn, so a
// caller's precondition (its resourceVersion) is checked by fn against the
// latest state. It returns the stored object (or the removed one).
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, c Codec, fn UpdateFunc) (out object.Object, err error) {
	ctx, sp := span(ctx, "txn update", key)
	defer func() { end(sp, err) }()
	for attempt := 1; ; attempt++ {
		sp.SetAttributes(attribute.Int("etcd.attempts", attempt))
		cur, err := s.Get(ctx, key, c, 0)
		if err != nil {
			return nil, err
		}
		curRev, _ := ParseResourceVersion(cur.GetMetadata().GetResourceVersion())
		next, remove, err := fn(cur)
		if err != nil {
			return nil, err
		}
		op, val := clientv3.OpDelete(key), []byte(nil)
		if !remove {
			if val, err = c.Encode(next); err != nil {
				return nil, err
			}
			op = clientv3.OpPut(key, string(val))
		}
		rev, ok, err := s.txn(ctx, key, clientv3.Compare(clientv3.ModRevision(key), "=", curRev), op, val)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		sp.SetAttributes(attribute.Int64("etcd.revision", rev), attribute.Bool("etcd.delete", remove))
		if remove {
			out := object.Copy(cur)
			SetResourceVersion(out, rev)
			return out, nil
		}
		out := object.Copy(next)
		SetResourceVersion(out, rev)
		return out, nil
	}
}

// ListResult is one page of a list.
type ListResult struct {
	Items []object.Object
	// Revision is the etcd revision the list was read at.
	Revision int64
	// Next is the key to continue from, "" when the list is complete.
	Next string
	// Remaining counts keys after this page (before filtering), when Next is set.
	Remaining int64
}

// List reads the keys under prefix at rev (0: latest, a quorum read), from
// start (inclusive; "" for the beginning), keeping objects that match keep,
// until limit objects are kept (0: no limit).
func (s *Store) List(ctx context.Context, prefix string, c Codec, rev int64, start string, limit int64, keep func(object.Object) bool) (ListResult, error) {
	end := clientv3.GetPrefixRangeEnd(prefix)
	if start == "" {
		start = prefix
	}
	var res ListResult
	pageSize := int64(500)
	if limit > 0 && limit < pageSize {
		pageSize = limit
	}
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(pageSize)}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := s.get(ctx, start, opts...)
		if err != nil {
			return ListResult{}, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		res.Revision = rev
		for i, kv := range resp.Kvs {
			obj, err := c.Decode(kv.Value, kv.ModRevision)
			if err != nil {
				return ListResult{}, fmt.Errorf("%s: %w", kv.Key, err)
			}
			if keep != nil && !keep(obj) {
				continue
			}
			res.Items = append(res.Items, obj)
			if limit > 0 && int64(len(res.Items)) == limit {
				last := i == len(resp.Kvs)-1
				if last && !resp.More {
					return res, nil
				}
				res.Next = string(kv.Key) + "\x00"
				res.Remaining = resp.Count - int64(i) - 1
				return res, nil
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return res, nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// Delete removes the object at key after check approves the current state
// (the caller's preconditions), retrying on a race, and returns the last state.
func (s *Store) Delete(ctx context.Context, key string, c Codec, check func(current object.Object) error) (object.Object, error) {
	return s.GuaranteedUpdate(ctx, key, c, func(cur object.Object) (object.Object, bool, error) {
		if check != nil {
			if err := check(cur); err != nil {
				return nil, false, err
			}
		}
		return nil, true, nil
	})
}

// CurrentRevision is etcd's current revision (a quorum read).
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	resp, err := s.get(ctx, "/registry/", clientv3.WithCountOnly(), clientv3.WithLimit(1))
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}
