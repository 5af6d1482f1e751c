package controller

import (
	"context"
	"log/slog"
	"sync"

	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/client/workqueue"
	"podline.dev/pkg/object"
)

// SyncFunc reconciles one key. It returns an error only for a transient
// failure, which requeues the key with backoff; a bad object is logged and
// answered with nil, so it is not retried until it changes.
type SyncFunc func(ctx context.Context, key string) error

// RunWorkers waits for the caches, then runs workers goroutines that take
// keys from q and hand them to sync, until ctx is done. It shuts q down and
// returns when the workers have stopped.
func RunWorkers(ctx context.Context, log *slog.Logger, q workqueue.RateLimitingInterface[string], workers int, syncFn SyncFunc, synced ...cache.InformerSynced) error {
	defer q.ShutDown()
	if !cache.WaitForCacheSync(ctx, synced...) {
		return ErrCacheNotSynced
	}
	if workers < 1 {
		workers = 1
	}
	log.Info("starting workers", "workers", workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for processNext(ctx, log, q, syncFn) {
			}
		})
	}
	<-ctx.Done()
	q.ShutDown()
	wg.Wait()
	log.Info("workers stopped")
	return nil
}

func processNext(ctx context.Context, log *slog.Logger, q workqueue.RateLimitingInterface[string], syncFn SyncFunc) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	if err := syncFn(ctx, key); err != nil {
		if ctx.Err() != nil {
			return true
		}
		log.Info("sync failed, requeuing", "key", key, "err", err, "requeues", q.NumRequeues(key))
		q.AddRateLimited(key)
		return true
	}
	q.Forget(key)
	return true
}

// KeyOf is the queue key of an object or of the last state in a tombstone.
func KeyOf(obj object.Object) (string, bool) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return "", false
	}
	return key, true
}

// Enqueue adds obj's key to q.
func Enqueue(q workqueue.Interface[string], obj object.Object) {
	if key, ok := KeyOf(obj); ok {
		q.Add(key)
	}
}
