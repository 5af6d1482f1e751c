package storage

import (
	"bytes"
	"context"
	"errors"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// An etcd member can vanish without closing its connections (a killed
// container, a cut network): a call routed to it hangs until its deadline,
// even though the other members hold a quorum. So each call's budget
// (Store.timeout) is spent in attempts of a third of it, and a failed
// attempt is tried again, which the client routes to the next member.

// attempts is how many tries one call's budget is split into.
const attempts = 3

// minAttempt keeps attempts long enough for a loaded but healthy etcd.
const minAttempt = time.Second

func (s *Store) attemptTimeout() time.Duration {
	return max(s.timeout/attempts, minAttempt)
}

// retry runs call in attempts until one succeeds, fails with an error
// other than ErrUnavailable, or the budget is spent. It returns the last
// error, classified.
func (s *Store) retry(ctx context.Context, call func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	for {
		actx, acancel := context.WithTimeout(ctx, s.attemptTimeout())
		err := classify(call(actx))
		acancel()
		if err == nil || !errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
			return err
		}
	}
}

// get is a read: trying it again is always safe.
func (s *Store) get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	var resp *clientv3.GetResponse
	err := s.retry(ctx, func(ctx context.Context) (err error) {
		resp, err = s.client.Get(ctx, key, opts...)
		return err
	})
	return resp, err
}

// txn writes op at key if cmp holds and returns the revision of the write
// and whether it happened. put is the value op puts (nil when op deletes).
//
// A failed attempt may have been applied by etcd with only the answer
// lost, and its retry then finds cmp false because of the write itself. So
// after a failed attempt, a retry whose cmp fails reads the key (the Else
// branch): if it holds exactly the value put (each write's encoding is
// unique: uid, resourceVersion-free bytes of this very update) or is gone
// for a delete, the earlier attempt is what happened and the write counts.
func (s *Store) txn(ctx context.Context, key string, cmp clientv3.Cmp, op clientv3.Op, put []byte) (rev int64, ok bool, err error) {
	lost := false
	err = s.retry(ctx, func(ctx context.Context) error {
		resp, err := s.client.Txn(ctx).If(cmp).Then(op).Else(clientv3.OpGet(key)).Commit()
		if err != nil {
			lost = true
			return err
		}
		rev, ok = resp.Header.Revision, resp.Succeeded
		if ok || !lost {
			return nil
		}
		kvs := resp.Responses[0].GetResponseRange().GetKvs()
		switch {
		case put != nil && len(kvs) == 1 && bytes.Equal(kvs[0].Value, put):
			rev, ok = kvs[0].ModRevision, true
		case put == nil && len(kvs) == 0:
			ok = true
		}
		return nil
	})
	return rev, ok, err
}
