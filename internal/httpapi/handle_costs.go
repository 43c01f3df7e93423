package httpapi

import (
	"net/http"

	"waymark/internal/cost"
)

// handleCosts answers GET /api/costs?month=YYYY-MM (administrators): the
// month's model usage per configuration — calls, tokens in and out, and
// their price by the configuration's prices per million tokens as they were
// when each call was recorded. No month is the current one (UTC).
func (s *Server) handleCosts(w http.ResponseWriter, r *http.Request) error {
	from, err := cost.ParseMonth(r.URL.Query().Get("month"), s.clock.Now())
	if err != nil {
		return err
	}
	rep, err := cost.New(s.db).Month(r.Context(), from)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, rep)
}
