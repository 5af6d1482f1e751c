// Package natspub publishes the apiserver's watch events to NATS JetStream
// for the watchcache replicas (services/watchcache).
//
// Each resource's Cacher already runs the resource's one etcd watch; the
// Publisher hangs a registry.EventSink on it (For), so publishing adds no
// etcd load. Sinks never block the cacher: they number each message with
// the resource's next sequence number and hand it to one publishing
// goroutine through a bounded queue. A message the queue cannot take, or
// that JetStream does not acknowledge, is lost as a whole and its number
// with it, so replicas see a gap in the sequence and backfill it from the
// apiserver; nothing is ever published out of order. Progress marks go out
// at most once a second per resource when the revision moved, or after a
// message of the resource was lost (so that a quiet resource's replicas
// see the gap without waiting for its next change), and a relist
// publishes a Reset mark. The publish span of an event is a child
// of the object's traceparent, and its own traceparent travels in the
// message header, so the replica's fan-out joins the object's trace.
//
// The stream (watchstream.StreamName, file storage, a window bounded by age
// and count) is created or updated on connect; a NATS that is down only
// loses messages, which replicas recover from as from any gap.
//
// The stream holds every object, Secrets included: in compose the
// connection is TLS (WithTLS) with the apiserver's own client certificate,
// and NATS admits that one and the replicas' only.
package natspub
