package replica

import (
	"net/http"
	"net/http/pprof"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

var (
	descWatchers = prometheus.NewDesc("watchcache_watchers", "Running watches served by this replica.", []string{"resource"}, nil)
	descFanned   = prometheus.NewDesc("watchcache_events_fanned_out_total", "Watch events handed to watchers (bookmarks not counted).", []string{"resource"}, nil)
	descApplied  = prometheus.NewDesc("watchcache_events_applied_total", "Events applied to the cache, from NATS or a backfill.", []string{"resource"}, nil)
	descLag      = prometheus.NewDesc("watchcache_lag_seconds", "Delay from the apiserver's publish to this replica's apply, for the last event.", []string{"resource"}, nil)
	descRevision = prometheus.NewDesc("watchcache_revision", "The etcd revision the cache is current to.", []string{"resource"}, nil)
	descFills    = prometheus.NewDesc("watchcache_gap_fills_total", "Sequence gaps filled from the apiserver.", []string{"resource"}, nil)
	descRelists  = prometheus.NewDesc("watchcache_relists_total", "Lists of the resource from the apiserver (the first, and each resync).", []string{"resource"}, nil)
	descReady    = prometheus.NewDesc("watchcache_ready", "1 when the replica serves (NATS connected, caches listed).", nil, nil)
)

// collector reads the caches and feeders at scrape time.
type collector struct{ r *Replica }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descWatchers, descFanned, descApplied, descLag, descRevision, descFills, descRelists, descReady} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	ready := 0.0
	if c.r.Ready() == nil {
		ready = 1
	}
	ch <- prometheus.MustNewConstMetric(descReady, prometheus.GaugeValue, ready)
	for _, rs := range c.r.resources {
		gr := rs.res.GroupResource()
		m, s := rs.cache.Metrics(), rs.feeder.Stats()
		ch <- prometheus.MustNewConstMetric(descWatchers, prometheus.GaugeValue, float64(m.Watchers), gr)
		ch <- prometheus.MustNewConstMetric(descFanned, prometheus.CounterValue, float64(m.EventsQueued), gr)
		ch <- prometheus.MustNewConstMetric(descApplied, prometheus.CounterValue, float64(m.EventsApplied), gr)
		ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, s.Lag.Seconds(), gr)
		ch <- prometheus.MustNewConstMetric(descRevision, prometheus.GaugeValue, float64(m.Revision), gr)
		ch <- prometheus.MustNewConstMetric(descFills, prometheus.CounterValue, float64(s.Fills), gr)
		ch <- prometheus.MustNewConstMetric(descRelists, prometheus.CounterValue, float64(s.Relists), gr)
	}
}

// MetricsHandler serves /metrics and /debug/pprof/, and the health
// paths, to anyone: the command puts it behind the apiserver's
// authorization, as a kube component's secure port (the health paths to
// anyone, the rest to clients allowed to get them: system:monitoring and
// system:masters), or binds it to loopback.
func (r *Replica) MetricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{r}, prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/", r.HealthHandler())
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	return mux
}
