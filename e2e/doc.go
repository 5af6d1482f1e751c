// Package e2e holds the end-to-end tests of podline: they run against the
// docker compose cluster that `make up` starts, as a user would use it —
// kubectl with .podline/kubeconfig, the REST API on https://127.0.0.1:6443,
// Jaeger's query API on https://127.0.0.1:16686, `docker compose exec` into
// nodes and etcd members, and `docker compose stop/kill` for faults.
//
// The tests carry the build tag e2e, so `go test ./...` without a cluster
// compiles none of them. `make e2e` starts a clean cluster, runs them with
// -tags e2e, and tears the cluster down.
package e2e
