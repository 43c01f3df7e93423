package httpapi

import (
	"net/http"
)

// handleLogout answers POST /api/logout: it ends the caller's session and
// clears the cookie (204). A bearer-token caller has no session; it gets 204 too.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) error {
	if id := sessionFrom(r.Context()); id != "" {
		if err := s.auth.Logout(r.Context(), id); err != nil {
			return err
		}
		s.ClearSessionCookie(w, r)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
