// Package metrics is the scheduler's Prometheus metrics, named as
// kube-scheduler names them: attempts by result, attempt and end-to-end
// latency histograms, pending pods per queue, preemption, and the leader
// election status. Handler serves them in the text exposition format.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Results of a scheduling attempt.
const (
	ResultScheduled     = "scheduled"
	ResultUnschedulable = "unschedulable"
	ResultError         = "error"
)

// Metrics holds the scheduler's collectors on their own registry.
type Metrics struct {
	Registry *prometheus.Registry

	ScheduleAttempts          *prometheus.CounterVec
	SchedulingAttemptDuration *prometheus.HistogramVec
	E2ESchedulingDuration     *prometheus.HistogramVec
	PodSchedulingSLIDuration  *prometheus.HistogramVec
	ExtensionPointDuration    *prometheus.HistogramVec
	PreemptionAttempts        prometheus.Counter
	PreemptionVictims         prometheus.Histogram
	LeaderElectionMaster      *prometheus.GaugeVec
}

// New registers the scheduler's metrics (and Go/process collectors) on a new registry.
func New() *Metrics {
	latency := prometheus.ExponentialBuckets(0.001, 2, 15)
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		ScheduleAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_schedule_attempts_total",
			Help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
		}, []string{"result", "profile"}),
		SchedulingAttemptDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scheduler_scheduling_attempt_duration_seconds",
			Help:    "Scheduling attempt latency in seconds (scheduling algorithm + binding).",
			Buckets: latency,
		}, []string{"result", "profile"}),
		E2ESchedulingDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scheduler_e2e_scheduling_duration_seconds",
			Help:    "E2e scheduling latency in seconds: from the start of the successful attempt to the pod being bound.",
			Buckets: latency,
		}, []string{"result", "profile"}),
		PodSchedulingSLIDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scheduler_pod_scheduling_sli_duration_seconds",
			Help:    "E2e latency for a pod being scheduled, from the first attempt to bound, over every attempt.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 20),
		}, []string{"attempts"}),
		ExtensionPointDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scheduler_framework_extension_point_duration_seconds",
			Help:    "Latency for running all plugins of a specific extension point.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 12),
		}, []string{"extension_point", "status", "profile"}),
		PreemptionAttempts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "scheduler_preemption_attempts_total",
			Help: "Total preemption attempts in the cluster till now.",
		}),
		PreemptionVictims: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "scheduler_preemption_victims",
			Help:    "Number of selected preemption victims.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 7),
		}),
		LeaderElectionMaster: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "leader_election_master_status",
			Help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.",
		}, []string{"name"}),
	}
	m.Registry.MustRegister(m.ScheduleAttempts, m.SchedulingAttemptDuration, m.E2ESchedulingDuration, m.PodSchedulingSLIDuration,
		m.ExtensionPointDuration, m.PreemptionAttempts, m.PreemptionVictims, m.LeaderElectionMaster,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// RegisterPendingPods exposes scheduler_pending_pods{queue} read from lengths at scrape time.
func (m *Metrics) RegisterPendingPods(lengths func() (active, backoff, unschedulable, gated int)) {
	for i, q := range []string{"active", "backoff", "unschedulable", "gated"} {
		m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "scheduler_pending_pods",
			Help:        "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
			ConstLabels: prometheus.Labels{"queue": q},
		}, func() float64 {
			a, b, u, g := lengths()
			return float64([]int{a, b, u, g}[i])
		}))
	}
}

// Attempt records one scheduling attempt's result and duration.
func (m *Metrics) Attempt(result, profile string, d time.Duration) {
	if m == nil {
		return
	}
	m.ScheduleAttempts.WithLabelValues(result, profile).Inc()
	m.SchedulingAttemptDuration.WithLabelValues(result, profile).Observe(d.Seconds())
}

// Handler serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}
