// Package daemon assembles podline-cri: it connects to containerd, loads
// the CNI configuration, builds the CRI service (package server) and
// serves it over gRPC on a unix socket, with an OpenTelemetry server
// handler so each CRI call is a span that continues the kubelet's trace.
// The command and the integration tests start it the same way.
package daemon
