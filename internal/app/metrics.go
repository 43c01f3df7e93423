package app

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"waymark/internal/run"
	"waymark/internal/store"
)

// runMetrics is a collector that reads the run and queue state from the
// database at scrape time, so every process reports the same numbers.
type runMetrics struct {
	db       *store.DB
	runs     *run.Store
	queue    depths
	byStatus *prometheus.Desc
	depth    *prometheus.Desc
	chat     *prometheus.Desc
	oldest   *prometheus.Desc
}

// depths is what the metrics read of the queue.
type depths interface {
	Depth(context.Context, store.Querier) (int, error)
	ChatPending(context.Context, store.Querier) (int, error)
}

func newRunMetrics(db *store.DB, runs *run.Store, q depths) *runMetrics {
	return &runMetrics{
		db:       db,
		runs:     runs,
		queue:    q,
		byStatus: prometheus.NewDesc("waymark_runs", "Runs by status.", []string{"status"}, nil),
		depth:    prometheus.NewDesc("waymark_queue_depth", "Run jobs waiting to be worked.", nil, nil),
		chat: prometheus.NewDesc("waymark_chat_jobs_pending", "Chat jobs (recorded messages and decisions) not finished: waiting or being worked.",
			nil, nil),
		oldest: prometheus.NewDesc("waymark_queue_oldest_wait_seconds", "How long the oldest queued run has waited.", nil, nil),
	}
}

func (m *runMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.byStatus
	ch <- m.depth
	ch <- m.chat
	ch <- m.oldest
}

func (m *runMetrics) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts := map[string]float64{}
	for _, s := range run.Statuses() {
		counts[string(s)] = 0
	}
	if byStatus, err := m.runs.CountByStatus(ctx); err == nil {
		for s, n := range byStatus {
			counts[string(s)] = float64(n)
		}
	}
	for s, n := range counts {
		ch <- prometheus.MustNewConstMetric(m.byStatus, prometheus.GaugeValue, n, s)
	}
	if n, err := m.queue.Depth(ctx, m.db); err == nil {
		ch <- prometheus.MustNewConstMetric(m.depth, prometheus.GaugeValue, float64(n))
	}
	if n, err := m.queue.ChatPending(ctx, m.db); err == nil {
		ch <- prometheus.MustNewConstMetric(m.chat, prometheus.GaugeValue, float64(n))
	}
	if oldest, err := m.runs.OldestQueued(ctx); err == nil {
		wait := 0.0
		if !oldest.IsZero() {
			wait = time.Since(oldest).Seconds()
		}
		ch <- prometheus.MustNewConstMetric(m.oldest, prometheus.GaugeValue, wait)
	}
}
