package httpapi

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"

	"waymark/internal/access"
	"waymark/internal/auth"
)

type loginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

type loginAnswer struct {
	CSRFToken string `json:"csrfToken"`
	User      Me     `json:"user"`
}

// handleLogin answers POST /api/login: a password login of a person (not a
// service account) that sets the session cookie and returns the CSRF token
// the UI sends with state-changing requests. Requiring a JSON body keeps
// cross-site forms from logging a browser in. A username or client address
// that failed too often answers 429 with Retry-After (issue 12 item 8).
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) error {
	var req loginRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.Username == "" || req.Password == "" {
		return Errorf(http.StatusBadRequest, "bad_request", "username and password are required")
	}
	refused := &Error{Status: http.StatusUnauthorized, Code: "unauthenticated", Message: "wrong username or password"}
	sess, err := s.auth.LoginFrom(r.Context(), clientAddr(r), req.Username, req.Password)
	var throttled *auth.ThrottledError
	if errors.As(err, &throttled) {
		secs := int64(math.Ceil(throttled.RetryAfter.Seconds()))
		w.Header().Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
		return &Error{Status: http.StatusTooManyRequests, Code: "too_many_attempts",
			Message: "too many failed logins; try again later", Err: err}
	}
	if errors.Is(err, auth.ErrUnauthenticated) {
		refused.Err = err
		return refused
	}
	if err != nil {
		return err
	}
	actor, err := access.LoadActor(r.Context(), s.db, sess.UID)
	if err != nil {
		return fmt.Errorf("load user %d after login: %w", sess.UID, err)
	}
	infoFrom(r.Context()).uid = sess.UID
	s.SetSessionCookie(w, r, sess)
	return WriteJSON(w, http.StatusOK, loginAnswer{CSRFToken: sess.CSRF, User: MeOf(actor)})
}

// clientAddr is the address a request came from, without the port: the
// peer's, so behind a reverse proxy it is the proxy's (forwarded headers are
// not trusted).
func clientAddr(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}
