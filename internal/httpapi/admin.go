package httpapi

import (
	"net/http"
	"strconv"

	"waymark/internal/access"
)

// HandleAdmin registers an authenticated route for administrators only: any
// other user gets 403 before h runs, so before any lookup, decoding or
// validation (issue 14) — a non-admin learns nothing about what exists.
func (s *Server) HandleAdmin(pattern string, h HandlerFunc) {
	s.Handle(pattern, func(w http.ResponseWriter, r *http.Request) error {
		if !ActorFrom(r.Context()).IsAdmin() {
			return access.ErrDenied
		}
		return h(w, r)
	})
}

// adminUID reads the uid path value of an administration route; a value that
// is not a positive integer names nothing, so it is 404 like an unknown uid.
func adminUID(r *http.Request) (int64, error) {
	n, err := strconv.ParseInt(r.PathValue("uid"), 10, 64)
	if err != nil || n <= 0 {
		return 0, errNotFound.With("no such uid %q", r.PathValue("uid"))
	}
	return n, nil
}
