package httpapi

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"
	"time"
	"waymark/internal/auth"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// readyTimeout bounds the database checks of /readyz.
const readyTimeout = 3 * time.Second

// handleHealthz answers GET /healthz: the process is up, and which build
// it runs (version and commit, as `waymark version` says).
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) error {
	body := map[string]string{"status": "ok"}
	if s.version != "" {
		body["version"] = s.version
	}
	if s.commit != "" {
		body["commit"] = s.commit
	}
	return WriteJSON(w, http.StatusOK, body)
}

// handleReadyz answers GET /readyz: 200 when the database answers and every
// migration is applied, else 503 naming which.
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := s.db.SQL.PingContext(ctx); err != nil {
		return errNotReady.With("database unreachable").Wrap(err)
	}
	current, err := s.db.MigrationsCurrent(ctx)
	if err != nil {
		return errNotReady.With("cannot read migration state").Wrap(err)
	}
	if !current {
		return errNotReady.With("database migrations pending; run waymark migrate")
	}
	return WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// handleMetrics answers GET /metrics with the registry in Prometheus text format.
func (s *Server) handleMetrics() HandlerFunc {
	h := promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{ErrorLog: slogPrinter{s}})
	return func(w http.ResponseWriter, r *http.Request) error {
		if s.metricsToken != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.metricsToken)) != 1 {
				return auth.ErrUnauthenticated.With("GET /metrics needs the metrics token as a bearer token")
			}
		}
		h.ServeHTTP(w, r)
		return nil
	}
}

// slogPrinter gives promhttp a place to report collection errors.
type slogPrinter struct{ s *Server }

func (p slogPrinter) Println(v ...any) { p.s.logger.Error("metrics", "err", v) }
