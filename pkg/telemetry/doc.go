// Package telemetry sets up OpenTelemetry for a podline component and
// carries a trace across the watch boundary. Components never call each
// other, so a trace cannot ride on a request from one to the next; instead
// the writer of an object stamps the W3C traceparent of its span on the
// object (annotation podline.dev/traceparent), and whoever acts on the
// object later starts its span as a child of that traceparent. One
// `kubectl apply` of a Deployment thus becomes one trace: apiserver,
// deployment and replicaset controllers, scheduler and kubelet.
//
// Setup exports the spans over OTLP/gRPC, with TLS verified by the CA file
// in OTEL_EXPORTER_OTLP_CERTIFICATE, as compose runs every component; plain
// text is for tests and local runs.
package telemetry
