// Package replica assembles one watchcache replica: a NATS connection, a
// watch cache and a feed.Feeder per resource, the gRPC services of package
// serve over those caches (and grpc.health.v1), and the HTTP handlers of
// health, metrics and pprof. The command (cmd/watchcache) and the
// integration tests run it the same way.
//
// The replica serves while NATS is reachable (or away for less than a
// grace) and every cache is current. When NATS stays away past the grace,
// or a feed fails, it stops serving: readiness and gRPC health say so,
// every open watch ends with 503 and new reads get 503, so clients watch
// the apiserver instead. Every feeder then resyncs; once NATS is back and
// each cache has caught up with the apiserver, it serves again.
//
// With an Authorizer, each client is the user of its TLS certificate and
// each List and Watch is authorized by the apiserver (package authorize),
// as the same request to the apiserver would be.
package replica
