package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

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
		r = r.WithContext(access.WithActorMemo(r.Context())) // one read of a TYPO3 user per request
		r2, err := u.API.Authenticate(r)
		if err != nil {
			code := errCode(err)
			switch {
			case (errors.Is(err, auth.ErrUnauthenticated) || code == "unauthenticated" || code == "csrf") && r.Header.Get("HX-Request") == "true":
				// An action of a page whose session ended: nothing is done, and
				// the page keeps what the editor typed and says so (the live
				// script shows the message with a login link back to the page).
				w.Header().Set(sessionEndedHeader, "1")
				http.Error(w, catalog.For(acceptLanguage(r)).Get("login.expired"), http.StatusUnauthorized)
			case errors.Is(err, auth.ErrUnauthenticated) || code == "unauthenticated":
				redirect(w, r, loginBack(screenOf(r), false))
			case code == "csrf":
				redirect(w, r, loginBack(screenOf(r), true))
			default:
				// An infrastructure failure: its sentence where it has one
				// (TYPO3 does not answer: try again), else "internal".
				u.logErr(r.Context(), "authenticate", err)
				var status int
				status, code = u.API.ClassifyRequest(w, r, err) // a database that does not answer: 503 with Retry-After
				msg := catalog.For(acceptLanguage(r)).Get("error.internal")
				if k := "error." + code; status == http.StatusServiceUnavailable && hasKey(k) {
					msg = catalog.For(acceptLanguage(r)).Get(k)
				}
				http.Error(w, msg, status)
			}
			return
		}
		a := httpapi.ActorFrom(r2.Context())
		me := &user{A: a, T: catalog.For(a.BackendLanguage)}
		if !formTextOK(r2) {
			refuseText(w, me.T)
			return
		}
		if c, err := r.Cookie(csrfCookie); err == nil {
			me.CSRF = c.Value
		}
		w.Header().Set("Cache-Control", "no-store")
		h(w, r2, me)
	}
}

// sessionEndedHeader marks the answer to an htmx request whose session has
// ended (401): the live script tells it from a refusal.
const sessionEndedHeader = "X-Waymark-Session-Ended"

// refusedHeader marks an action's answer that shows a refusal: the page keeps
// the editor's typed text (the composer is reset only after a message was taken).
const refusedHeader = "X-Waymark-Refused"

// loginBack is the login page that, after logging in, returns to the local
// path next (the screen the session ended on).
func loginBack(next string, expired bool) string {
	q := url.Values{}
	if expired {
		q.Set("expired", "1")
	}
	// The chat is where a login leads anyway.
	if localPath(next) && next != "/" && next != "/chat" && !strings.HasPrefix(next, "/login") {
		q.Set("next", next)
	}
	if len(q) == 0 {
		return "/login"
	}
	return "/login?" + q.Encode()
}

// screenOf is the screen a request without a session asked for, to return
// to after logging in: a page (GET); an action has none.
func screenOf(r *http.Request) string {
	if r.Method != http.MethodGet {
		return ""
	}
	return r.URL.RequestURI()
}

// localPath reports whether p is a path of this site ("/chat/5"), never
// another host ("//evil", "/\\evil", "https://…"): where a login may send
// the browser on to.
func localPath(p string) bool {
	if p == "" || p[0] != '/' || len(p) > 1 && (p[1] == '/' || p[1] == '\\') {
		return false
	}
	u, err := url.Parse(p)
	return err == nil && u.Scheme == "" && u.Host == "" && !strings.ContainsAny(p, "\\\r\n")
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
