// Package feed keeps one resource's watch cache (pkg/watchcache) current
// from the apiserver's JetStream stream, as a watchcache replica's only
// writer of that cache.
//
// A Feeder reads the resource's messages in stream order through an
// ordered JetStream consumer. The first message it sees fixes its base: it
// lists the resource from the apiserver exactly at the revision before that
// message (so replaying the stream's window gives the replica the same
// history the window holds), or, when etcd has compacted that revision, at
// the current one. Then every message must carry the next number of the
// publisher's per-resource sequence. When one does not — a message lost by
// the publisher, aged out of the stream, or a new publisher epoch — the
// Feeder backfills the hole from an apiserver watch that starts at the
// cache's revision and stops at the message's, so watchers see every event
// exactly once and never a hole. When the apiserver cannot replay that far
// (410), or the publisher says it relisted (a Reset mark past the cache),
// the Feeder relists: the cache is replaced, its watchers are closed and
// resume from their last revision (or get 410 and relist), as with
// kube-apiserver's cacher. Events at or below the cache's revision are
// skipped, so a replay after a resync applies nothing twice.
//
// A Feeder's cache is current from its first list until the feed fails
// (the consumer or the apiserver) or the replica calls Resync because NATS
// is gone; then Run starts a new consumer after the last message it
// handled and catches up from the apiserver's watch to the apiserver's
// current revision before the cache is current again, since the events
// published while NATS was away are lost and no later message need
// announce them. Replicas serve only from current caches.
package feed
