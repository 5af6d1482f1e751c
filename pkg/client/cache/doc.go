// Package cache is podline's client-side cache of API objects, the pieces
// of client-go's tools/cache, each in its own file. A Reflector (reflector.go)
// lists a resource through a ListerWatcher (listwatch.go) and then watches
// it from the list's resourceVersion; a dropped watch resumes from the last
// resourceVersion seen (bookmarks included) and only a 410 makes it list
// again. It writes into a DeltaFIFO (delta_fifo.go), which queues every
// change per key so that none is lost however slowly it is consumed, and
// turns a relist into Replaced deltas plus DeletedFinalStateUnknown
// tombstones for what vanished. A SharedIndexInformer (shared_informer.go)
// pops those deltas into an Indexer (store.go, index.go,
// thread_safe_store.go) and tells its handlers (event_handlers.go) about
// each change; a SharedInformerFactory (informer_factory.go) keeps one
// informer per resource per process, and a Lister[T] (lister.go) reads the
// Indexer as typed objects by label selector and namespace.
//
// Objects in the cache are shared by every reader and are read-only: copy
// one with object.Copy before changing it. Time (backoff, resync) comes from
// an injected clock.Clock, and package cachetest has an in-memory
// ListerWatcher with fault injection for tests.
package cache
