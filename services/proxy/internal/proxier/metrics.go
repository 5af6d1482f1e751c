package proxier

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the proxy's Prometheus metrics, under kube-proxy's names so
// that its dashboards read podline's proxy unchanged.
type Metrics struct {
	Registry *prometheus.Registry
	// SyncDuration is every sync's time, full or partial.
	SyncDuration        prometheus.Histogram
	FullSyncDuration    prometheus.Histogram
	PartialSyncDuration prometheus.Histogram
	// LastSync is when the rules were last written successfully.
	LastSync prometheus.Gauge
	// LastQueued is when a change last asked for a sync.
	LastQueued   prometheus.Gauge
	SyncFailures prometheus.Counter
}

// NewMetrics registers the proxy's metrics in a registry of their own.
func NewMetrics() *Metrics {
	buckets := prometheus.ExponentialBuckets(0.001, 2, 15)
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		SyncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "kubeproxy", Name: "sync_proxy_rules_duration_seconds",
			Help: "SyncProxyRules latency in seconds", Buckets: buckets}),
		FullSyncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "kubeproxy", Name: "sync_full_proxy_rules_duration_seconds",
			Help: "SyncProxyRules latency in seconds for full resyncs", Buckets: buckets}),
		PartialSyncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "kubeproxy", Name: "sync_partial_proxy_rules_duration_seconds",
			Help: "SyncProxyRules latency in seconds for partial resyncs", Buckets: buckets}),
		LastSync: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "kubeproxy", Name: "sync_proxy_rules_last_timestamp_seconds",
			Help: "The last time proxy rules were successfully synced"}),
		LastQueued: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "kubeproxy", Name: "sync_proxy_rules_last_queued_timestamp_seconds",
			Help: "The last time a sync of proxy rules was queued"}),
		SyncFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "kubeproxy", Name: "sync_proxy_rules_nftables_sync_failures_total",
			Help: "Cumulative proxy nftables sync failures"}),
	}
	m.Registry.MustRegister(m.SyncDuration, m.FullSyncDuration, m.PartialSyncDuration,
		m.LastSync, m.LastQueued, m.SyncFailures,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}
