package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"waymark/internal/store"
)

// Mount registers a handler of another package (the web UI) behind the
// server's middleware: request id, panic recovery, access log and metrics.
// The handler authenticates with Authenticate where it needs a user.
func (s *Server) Mount(pattern string, h http.Handler) {
	s.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		infoFrom(r.Context()).route = routeOf(r.Pattern)
		s.securityHeaders(w, r)
		h.ServeHTTP(w, r)
	}))
}

// Authenticate is the authentication of routes registered with Handle, for
// mounted handlers: bearer token or session cookie, the CSRF header on a
// session-authenticated state-changing request. The returned request carries
// the actor (ActorFrom).
func (s *Server) Authenticate(r *http.Request) (*http.Request, error) { return s.authenticate(r) }

// Classify maps a handler error to the status and code the API answers with
// (the web UI shows the code's message from its catalogue).
func Classify(err error) (status int, code string) {
	status, code, _ = classify(err, "")
	return status, code
}

// ClassifyRequest is Classify for a mounted handler's error: an internal
// error from a database that does not answer is 503 database_unavailable,
// and w gets the Retry-After the API's own answer has, so a page of the web
// UI tells an outage to wait out from a fault of the server as the API does.
func (s *Server) ClassifyRequest(w http.ResponseWriter, r *http.Request, err error) (status int, code string) {
	status, code = Classify(err)
	if status == http.StatusInternalServerError && s.dbUnavailable(r.Context(), err) {
		w.Header().Set("Retry-After", strconv.Itoa(dbRetryAfter))
		return http.StatusServiceUnavailable, store.ErrUnavailable.Code()
	}
	return status, code
}

// SessionEnd ends the session of the request's cookie, if any, and clears
// the cookie; what POST /api/logout does for a session.
func (s *Server) SessionEnd(w http.ResponseWriter, r *http.Request) error {
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
		if err := s.auth.Logout(r.Context(), c.Value); err != nil {
			return err
		}
	}
	s.ClearSessionCookie(w, r)
	return nil
}

// CookieSecure reports whether cookies of the request's answer are Secure
// (--secure-cookies or TLS), as the session cookie is.
func (s *Server) CookieSecure(r *http.Request) bool { return s.secure || r.TLS != nil }

// Now is the server's clock, for mounted handlers that stamp what they
// store (an API token's creation time).
func (s *Server) Now() time.Time { return s.clock.Now() }

// HashCost is the bcrypt work factor (Config.HashCost) mounted handlers hash
// the passwords and tokens they store at.
func (s *Server) HashCost() int { return s.hashCost }

// hstsMaxAge is the Strict-Transport-Security policy: a year.
const hstsMaxAge = "max-age=31536000"

// securityHeaders sets the headers every answer of a route carries, the
// mounted UI's assets and /metrics among them: nosniff, so no browser reads
// an answer as another type than it says; and, when the server is reached
// over HTTPS — it serves TLS, or its cookies are Secure (an https
// --public-url or --secure-cookies) — Strict-Transport-Security.
func (s *Server) securityHeaders(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	if s.CookieSecure(r) {
		h.Set("Strict-Transport-Security", hstsMaxAge)
	}
}
