package httpapi

import (
	"net/http"

	"waymark/internal/auth"
)

// SetSessionCookie sets the cookie of a new session: HttpOnly, SameSite=Lax,
// and Secure when the server was configured with SecureCookies or the
// request came over TLS. Every login (API or UI) sets it here.
func (s *Server) SetSessionCookie(w http.ResponseWriter, r *http.Request, sess auth.Session) {
	http.SetCookie(w, &http.Cookie{
		Name:     SessionCookie,
		Value:    sess.ID,
		Path:     "/",
		Expires:  sess.Expires,
		HttpOnly: true,
		Secure:   s.secure || r.TLS != nil,
		SameSite: http.SameSiteLaxMode,
	})
}

// ClearSessionCookie removes the session cookie (logout).
func (s *Server) ClearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name:     SessionCookie,
		Value:    "",
		Path:     "/",
		MaxAge:   -1,
		HttpOnly: true,
		Secure:   s.secure || r.TLS != nil,
		SameSite: http.SameSiteLaxMode,
	})
}
