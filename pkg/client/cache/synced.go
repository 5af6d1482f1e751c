package cache

import (
	"context"
	"time"
)

// InformerSynced reports whether an informer, or a handler registration, has synced.
type InformerSynced func() bool

// syncPollInterval is how often WaitForCacheSync checks.
const syncPollInterval = 100 * time.Millisecond

// WaitForCacheSync waits until every cacheSync reports true, or ctx is done.
// It reports whether they all synced. Controllers call it before starting
// workers, so that workers never act on a partial cache.
func WaitForCacheSync(ctx context.Context, cacheSyncs ...InformerSynced) bool {
	allSynced := func() bool {
		for _, synced := range cacheSyncs {
			if !synced() {
				return false
			}
		}
		return true
	}
	if allSynced() {
		return true
	}
	t := time.NewTicker(syncPollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			if allSynced() {
				return true
			}
		}
	}
}
