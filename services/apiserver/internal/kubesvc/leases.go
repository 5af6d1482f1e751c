package kubesvc

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// LeasePrefix is where apiservers record their addresses.
const LeasePrefix = "/registry/masterleases/"

// Leases records which apiserver addresses are live.
type Leases interface {
	// Renew marks addr live for ttl.
	Renew(ctx context.Context, addr string, ttl time.Duration) error
	// Live lists the live addresses, sorted.
	Live(ctx context.Context) ([]string, error)
	// Remove drops addr (a graceful shutdown).
	Remove(ctx context.Context, addr string) error
}

// EtcdLeases keeps one key per address under LeasePrefix, attached to an
// etcd lease that expires unless renewed.
type EtcdLeases struct {
	client *clientv3.Client
	mu     sync.Mutex
	leases map[string]clientv3.LeaseID
}

var _ Leases = (*EtcdLeases)(nil)

// NewEtcdLeases returns leases kept in etcd.
func NewEtcdLeases(client *clientv3.Client) *EtcdLeases {
	return &EtcdLeases{client: client, leases: map[string]clientv3.LeaseID{}}
}

// Renew implements Leases.
func (l *EtcdLeases) Renew(ctx context.Context, addr string, ttl time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id, ok := l.leases[addr]; ok {
		if _, err := l.client.KeepAliveOnce(ctx, id); err == nil {
			return nil
		}
		delete(l.leases, addr) // expired (or etcd lost it): grant a new one
	}
	g, err := l.client.Grant(ctx, int64(max(ttl/time.Second, 1)))
	if err != nil {
		return err
	}
	if _, err := l.client.Put(ctx, LeasePrefix+addr, addr, clientv3.WithLease(g.ID)); err != nil {
		return err
	}
	l.leases[addr] = g.ID
	return nil
}

// Live implements Leases.
func (l *EtcdLeases) Live(ctx context.Context) ([]string, error) {
	resp, err := l.client.Get(ctx, LeasePrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		out = append(out, strings.TrimPrefix(string(kv.Key), LeasePrefix))
	}
	sort.Strings(out)
	return out, nil
}

// Remove implements Leases.
func (l *EtcdLeases) Remove(ctx context.Context, addr string) error {
	l.mu.Lock()
	id, ok := l.leases[addr]
	delete(l.leases, addr)
	l.mu.Unlock()
	if ok {
		_, _ = l.client.Revoke(ctx, id)
	}
	_, err := l.client.Delete(ctx, LeasePrefix+addr)
	return err
}
