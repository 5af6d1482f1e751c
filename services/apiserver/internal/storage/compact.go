package storage

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// compactRevKey records the last compaction, so several apiservers compact
// once per interval between them (as kube-apiserver does).
const compactRevKey = "compact_rev_key"

// Compactor compacts etcd on a timer, keeping the history of the last interval:
// at each tick it compacts up to the revision it saw at the previous tick.
type Compactor struct {
	client   *clientv3.Client
	interval time.Duration
}

// NewCompactor returns a compactor over client with the given interval.
func NewCompactor(client *clientv3.Client, interval time.Duration) *Compactor {
	return &Compactor{client: client, interval: interval}
}

// Run compacts until ctx ends.
func (c *Compactor) Run(ctx context.Context) {
	t := time.NewTicker(c.interval)
	defer t.Stop()
	var prevVersion, prevRev int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		v, rev, err := c.compactOnce(ctx, prevVersion, prevRev)
		if err != nil {
			slog.Warn("compaction failed", "err", err)
			continue
		}
		prevVersion, prevRev = v, rev
	}
}

// compactOnce bumps the shared compaction key if it is still at prevVersion
// and, if it won, compacts to prevRev. It returns the key's version and the
// current revision to use next time.
func (c *Compactor) compactOnce(ctx context.Context, prevVersion, prevRev int64) (int64, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := c.client.Txn(ctx).
		If(clientv3.Compare(clientv3.Version(compactRevKey), "=", prevVersion)).
		Then(clientv3.OpPut(compactRevKey, strconv.FormatInt(prevRev, 10))).
		Else(clientv3.OpGet(compactRevKey)).
		Commit()
	if err != nil {
		return prevVersion, prevRev, err
	}
	curRev := resp.Header.Revision
	if !resp.Succeeded {
		// Another apiserver compacted; follow its key version.
		kvs := resp.Responses[0].GetResponseRange().GetKvs()
		if len(kvs) == 0 {
			return 0, curRev, nil
		}
		return kvs[0].Version, curRev, nil
	}
	if prevRev > 0 {
		if _, err := c.client.Compact(ctx, prevRev); err != nil {
			return prevVersion + 1, curRev, classify(err)
		}
		slog.Info("compacted etcd", "revision", prevRev)
	}
	return prevVersion + 1, curRev, nil
}

// CompactNow compacts everything before the current revision; tests use it to make 410s.
func (c *Compactor) CompactNow(ctx context.Context) (int64, error) {
	resp, err := c.client.Get(ctx, compactRevKey)
	if err != nil {
		return 0, classify(err)
	}
	rev := resp.Header.Revision
	_, err = c.client.Compact(ctx, rev, clientv3.WithCompactPhysical())
	return rev, classify(err)
}
