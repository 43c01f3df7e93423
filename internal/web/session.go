package web

import (
	"encoding/json"
	"errors"
	"net/http"

	"waymark/internal/access"
	"waymark/internal/auth"
	"waymark/internal/catalog"
	"waymark/internal/httpapi"
)

// csrfCookie keeps the session's CSRF token for the pages to send as the
// API's X-CSRF-Token header (htmx hx-headers). The server reads it and
// renders it into the page; scripts never read cookies.
const csrfCookie = "waymark_csrf"

// user is who a screen is rendered for.
type user struct {
	A    *access.Actor
	T    catalog.T
	CSRF string
}

// authed authenticates a request like the API does (session cookie, CSRF
// header on POST) and runs h; an unauthenticated visitor goes to the login.
func (u *UI) authed(h func(w http.ResponseWriter, r *http.Request, me *user)) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		r2, err := u.API.Authenticate(r)
		if err != nil {
			code := errCode(err)
			switch {
			case errors.Is(err, auth.ErrUnauthenticated) || code == "unauthenticated":
				redirect(w, r, "/login")
			case code == "csrf":
				redirect(w, r, "/login?expired=1")
			default:
				u.logErr(r.Context(), "authenticate", err)
				http.Error(w, catalog.For(acceptLanguage(r)).Get("error.internal"), http.StatusInternalServerError)
			}
			return
		}
		a := httpapi.ActorFrom(r2.Context())
		me := &user{A: a, T: catalog.For(a.BackendLanguage)}
		if c, err := r.Cookie(csrfCookie); err == nil {
			me.CSRF = c.Value
		}
		w.Header().Set("Cache-Control", "no-store")
		h(w, r2, me)
	}
}

// redirect sends the browser to path: htmx requests by HX-Redirect, others by 303.
func redirect(w http.ResponseWriter, r *http.Request, path string) {
	if r.Header.Get("HX-Request") == "true" {
		w.Header().Set("HX-Redirect", path)
		w.WriteHeader(http.StatusOK)
		return
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// hxHeaders is the hx-headers value of a page: the CSRF header the API checks.
func (me *user) hxHeaders() string {
	b, _ := json.Marshal(map[string]string{httpapi.CSRFHeader: me.CSRF})
	return string(b)
}

// acceptLanguage picks the catalogue language of a visitor without a user.
func acceptLanguage(r *http.Request) string {
	al := r.Header.Get("Accept-Language")
	if len(al) >= 2 {
		return al[:2]
	}
	return ""
}
