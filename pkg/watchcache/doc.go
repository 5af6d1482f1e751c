// Package watchcache is the in-memory watch cache of one resource
// (kube-apiserver's cacher and watchCache, written afresh): the apiserver
// runs one etcd watch per resource and feeds every change to Apply, and any
// number of list and watch requests are served from here. The NATS fan-out
// replicas (services/watchcache) keep the same cache, fed from JetStream.
//
// Three pieces fit together under one lock. The current state is a map
// from object key to the latest object, which List reads and a watch from
// revision 0 turns into synthetic ADDED events. The ring is a fixed-size
// circular buffer of the latest applied changes, each kept with the state
// it replaced; a watch from revision R > 0 replays the entries after R from
// it, and R older than the ring's history (or than the last Replace) is 410
// Expired, "too old resource version", after which the client relists.
// Watchers are registered in the same critical section that builds their
// replay, so the replay and the live events that follow neither overlap nor
// leave a gap. Apply converts each change for each watcher with that
// watcher's filter (ADDED when an object starts matching, MODIFIED while it
// matches, DELETED when it stops or is deleted) and puts it in the
// watcher's bounded queue without ever waiting; a watcher whose queue is
// full is closed, like kube-apiserver closes a watcher that cannot keep up,
// and its client resumes from the last revision it received. One goroutine
// per watcher moves its replay and then its queue into the channel the
// client reads. Progress advances the revision without a change (etcd
// progress notifications), which wakes WaitUntilFresh and lets idle
// watchers that asked for them get bookmarks; Replace installs a fresh
// listed state, empties the ring and closes every watcher.
//
// The core does no I/O and reads time only from an injected Clock
// (bookmark pacing, the WaitUntilFresh timeout); the apiserver calls Tick
// on a ticker. Objects are shared, never copied: everything the cache hands
// out is read-only, and the cache never changes an object after Apply.
//
// Sizes. The ring keeps DefaultCapacity (1024) events: Kubernetes sizes its
// ring from 100 to 100,000 events to hold about 75 s of history; at
// podline's scale (a few nodes, hundreds of pods) 1024 changes per resource
// covers minutes, while the ring's own cost is about 73 bytes an event plus the
// old object versions it keeps alive. Each watcher may lag by
// DefaultWatcherBuffer (256) events: enough to absorb a burst such as a
// namespace deletion while the client is busy, well under the ring's 1024 so
// that a dropped watcher can always resume from its last revision without a
// relist, and memory is only used while a watcher actually lags (about 56 bytes a
// queued event; a drained queue shrinks back).
package watchcache
