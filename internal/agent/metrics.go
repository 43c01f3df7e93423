package agent

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the runtime's Prometheus metrics: the latency of model calls
// by configuration and outcome, and refused process invocations and
// continuations by case. Its methods are Config.ObserveProvider and
// Config.ObserveRefusal; Collectors are registered where the application is
// wired.
type Metrics struct {
	providerSeconds *prometheus.HistogramVec
	refusals        *prometheus.CounterVec
}

// NewMetrics returns the runtime's metrics, not registered yet.
func NewMetrics() *Metrics {
	return &Metrics{
		providerSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "waymark_provider_call_seconds", Help: "Latency of model calls, by configuration and outcome.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)}, []string{"configuration", "outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "waymark_process_refusals_total", Help: "Refused process invocations and continuations, by case."}, []string{"refusal"}),
	}
}

// ObserveProvider records a model call of configuration cfg that took d and
// ended with err (Config.ObserveProvider).
func (m *Metrics) ObserveProvider(cfg int64, d time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.providerSeconds.WithLabelValues(strconv.FormatInt(cfg, 10), outcome).Observe(d.Seconds())
}

// ObserveRefusal counts a refusal of case c (Config.ObserveRefusal).
func (m *Metrics) ObserveRefusal(c string) { m.refusals.WithLabelValues(c).Inc() }

// Collectors are the metrics to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.providerSeconds, m.refusals}
}
