package store

import "github.com/prometheus/client_golang/prometheus"

// Collectors are the store's Prometheus metrics: the transactions and the
// statements this process ran through db (waymark bench divides them by
// answers).
func (db *DB) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "waymark_db_commits_total",
			Help: "Transactions this process committed through the store (waymark bench divides them by answers)."},
			func() float64 { return float64(db.Commits()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "waymark_db_statements_total",
			Help: "Statements this process ran through the store (waymark bench divides them by answers)."},
			func() float64 { return float64(db.Statements()) }),
	}
}
