package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"waymark/internal/agent"
	"waymark/internal/run"
)

// handleAdminRunList answers GET /api/admin/runs?status=&configuration=&
// initiator=&from=&to=&after=&limit=: every run, newest first, as RunStatus.
// from and to take RFC 3339 times or dates (YYYY-MM-DD, UTC; to includes
// the whole day).
func (s *Server) handleAdminRunList(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := agent.RunFilter{Status: run.Status(q.Get("status")), After: q.Get("after")}
	var err error
	if f.Configuration, err = positiveParam(q.Get("configuration"), "configuration"); err != nil {
		return err
	}
	if f.Initiator, err = positiveParam(q.Get("initiator"), "initiator"); err != nil {
		return err
	}
	if f.From, err = timeParam(q.Get("from"), "from", false); err != nil {
		return err
	}
	if f.To, err = timeParam(q.Get("to"), "to", true); err != nil {
		return err
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return errBadRequest.With("limit: want 1 to %d, got %q", agent.MaxRunListLimit, v)
		}
		f.Limit = n
	}
	page, err := s.runtime.List(r.Context(), ActorFrom(r.Context()).UID, f)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, page)
}

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

// timeParam reads an RFC 3339 time or a date; a date as an upper bound
// (endOfDay) means the start of the next day.
func timeParam(v, name string, endOfDay bool) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	d, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, errBadRequest.With("%s: want an RFC 3339 time or a date YYYY-MM-DD, got %q", name, v)
	}
	if endOfDay {
		d = d.AddDate(0, 0, 1)
	}
	return d, nil
}
