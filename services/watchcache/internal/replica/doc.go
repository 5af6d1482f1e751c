// Package replica assembles one watchcache replica: a NATS connection, a
// watch cache and a feed.Feeder per resource, the gRPC services of package
// serve over those caches, and the HTTP endpoints /healthz, /readyz and
// /metrics. The replica is ready when NATS is connected and every cache
// holds its first state; the command (cmd/watchcache) and the integration
// tests run it the same way.
package replica
