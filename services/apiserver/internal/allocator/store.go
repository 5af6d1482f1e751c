package allocator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/encoding/protowire"
)

// Keys of kube-apiserver's range allocations.
const (
	KeyServiceIPs       = "/registry/ranges/serviceips"
	KeyServiceNodePorts = "/registry/ranges/servicenodeports"
)

// Snapshot is a RangeAllocation: the range and its bitmap.
type Snapshot struct {
	Range string
	Data  []byte
}

// Store holds snapshots. Rev is the key's mod revision; 0 means absent.
type Store interface {
	// Get reads the snapshot at key.
	Get(ctx context.Context, key string) (s Snapshot, rev int64, err error)
	// Swap writes s at key if the key is still at rev, and reports whether
	// it was.
	Swap(ctx context.Context, key string, rev int64, s Snapshot) (bool, error)
}

// EtcdStore keeps snapshots in etcd, encoded as kube-apiserver encodes a
// core/v1 RangeAllocation.
type EtcdStore struct {
	client  *clientv3.Client
	timeout time.Duration
}

var _ Store = (*EtcdStore)(nil)

// NewEtcdStore returns a store over client; timeout bounds each call (0: 10s).
func NewEtcdStore(client *clientv3.Client, timeout time.Duration) *EtcdStore {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &EtcdStore{client: client, timeout: timeout}
}

// Get implements Store.
func (s *EtcdStore) Get(ctx context.Context, key string) (Snapshot, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return Snapshot{}, 0, &StoreError{fmt.Errorf("read %s: %w", key, err)}
	}
	if len(resp.Kvs) == 0 {
		return Snapshot{}, 0, nil
	}
	snap, err := DecodeRangeAllocation(resp.Kvs[0].Value)
	if err != nil {
		return Snapshot{}, 0, fmt.Errorf("%s: %w", key, err)
	}
	return snap, resp.Kvs[0].ModRevision, nil
}

// Swap implements Store.
func (s *EtcdStore) Swap(ctx context.Context, key string, rev int64, snap Snapshot) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cmp := clientv3.Compare(clientv3.ModRevision(key), "=", rev)
	if rev == 0 {
		cmp = clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
	}
	resp, err := s.client.Txn(ctx).If(cmp).Then(clientv3.OpPut(key, string(EncodeRangeAllocation(snap)))).Commit()
	if err != nil {
		return false, &StoreError{fmt.Errorf("write %s: %w", key, err)}
	}
	return resp.Succeeded, nil
}

var magic = []byte("k8s\x00")

// EncodeRangeAllocation writes s as kube-apiserver stores a RangeAllocation:
// "k8s\x00", then runtime.Unknown{typeMeta{apiVersion: v1, kind:
// RangeAllocation}, raw} where raw is the RangeAllocation's protobuf
// (metadata = 1, range = 2, data = 3).
func EncodeRangeAllocation(s Snapshot) []byte {
	var raw []byte
	raw = protowire.AppendTag(raw, 1, protowire.BytesType)
	raw = protowire.AppendBytes(raw, nil)
	raw = protowire.AppendTag(raw, 2, protowire.BytesType)
	raw = protowire.AppendString(raw, s.Range)
	raw = protowire.AppendTag(raw, 3, protowire.BytesType)
	raw = protowire.AppendBytes(raw, s.Data)
	var tm []byte
	tm = protowire.AppendTag(tm, 1, protowire.BytesType)
	tm = protowire.AppendString(tm, "v1")
	tm = protowire.AppendTag(tm, 2, protowire.BytesType)
	tm = protowire.AppendString(tm, "RangeAllocation")
	out := append([]byte(nil), magic...)
	out = protowire.AppendTag(out, 1, protowire.BytesType)
	out = protowire.AppendBytes(out, tm)
	out = protowire.AppendTag(out, 2, protowire.BytesType)
	out = protowire.AppendBytes(out, raw)
	return out
}

// DecodeRangeAllocation reads what EncodeRangeAllocation writes.
func DecodeRangeAllocation(v []byte) (Snapshot, error) {
	rest, ok := bytes.CutPrefix(v, magic)
	if !ok {
		return Snapshot{}, errors.New("range allocation has no k8s prefix")
	}
	var raw []byte
	var kind string
	if err := fields(rest, func(n protowire.Number, b []byte) {
		switch n {
		case 1:
			_ = fields(b, func(n protowire.Number, b []byte) {
				if n == 2 {
					kind = string(b)
				}
			})
		case 2:
			raw = b
		}
	}); err != nil {
		return Snapshot{}, err
	}
	if kind != "RangeAllocation" {
		return Snapshot{}, fmt.Errorf("value holds %q, want RangeAllocation", kind)
	}
	var s Snapshot
	err := fields(raw, func(n protowire.Number, b []byte) {
		switch n {
		case 2:
			s.Range = string(b)
		case 3:
			s.Data = append([]byte(nil), b...)
		}
	})
	return s, err
}

// fields calls fn with each length-delimited field of a message and skips
// the others.
func fields(b []byte, fn func(protowire.Number, []byte)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return protowire.ParseError(m)
			}
			fn(num, v)
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return protowire.ParseError(m)
		}
		b = b[m:]
	}
	return nil
}

// MemoryStore is a Store in memory, for tests.
type MemoryStore struct {
	mu   sync.Mutex
	rev  int64
	data map[string]memEntry
	// Fail, when set, is returned by every call.
	Fail error
}

type memEntry struct {
	snap Snapshot
	rev  int64
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{data: map[string]memEntry{}} }

// Get implements Store.
func (m *MemoryStore) Get(_ context.Context, key string) (Snapshot, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Fail != nil {
		return Snapshot{}, 0, m.Fail
	}
	e := m.data[key]
	return Snapshot{Range: e.snap.Range, Data: append([]byte(nil), e.snap.Data...)}, e.rev, nil
}

// Swap implements Store.
func (m *MemoryStore) Swap(_ context.Context, key string, rev int64, s Snapshot) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Fail != nil {
		return false, m.Fail
	}
	if m.data[key].rev != rev {
		return false, nil
	}
	m.rev++
	m.data[key] = memEntry{snap: Snapshot{Range: s.Range, Data: append([]byte(nil), s.Data...)}, rev: m.rev}
	return true, nil
}
