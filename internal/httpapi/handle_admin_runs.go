package httpapi

import (
	"net/http"
	"strconv"

	"waymark/internal/agent"
)

// handleAdminRunList answers GET /api/admin/runs?status=&configuration=&
// initiator=&from=&to=&after=&limit=: every run, newest first, as RunStatus
// (the filter is agent.ParseRunFilter's).
func (s *Server) handleAdminRunList(w http.ResponseWriter, r *http.Request) error {
	f, err := agent.ParseRunFilter(r.URL.Query())
	if err != nil {
		return err
	}
	page, err := s.runtime.List(r.Context(), ActorFrom(r.Context()).UID, f)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, page)
}

// positiveParam reads an optional positive uid parameter (0 when empty).
func positiveParam(v, name string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, errBadRequest.With("%s: want a positive integer, got %q", name, v)
	}
	return n, nil
}
