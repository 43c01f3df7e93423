package web

import (
	"net/http"

	"waymark/internal/auth"
	"waymark/internal/catalog"
	"waymark/internal/httpapi"
)

type loginData struct {
	// TYPO3 is the TYPO3 backend's URL where Waymark is opened from TYPO3
	// (the bridge); the page points editors there.
	TYPO3    string
	Username string
	Error    string // a catalogue text
	Next     string // the local path to return to after logging in ("" for the chat)
}

// handleLoginPage renders the login form; a signed-in user goes on home.
func (u *UI) handleLoginPage(w http.ResponseWriter, r *http.Request) {
	if to, ok := u.home(r); ok {
		if next := r.URL.Query().Get("next"); localPath(next) {
			to = next
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
		return
	}
	t := catalog.For(acceptLanguage(r))
	p := &page{T: t, Title: t.Get("login.title"), Login: &loginData{TYPO3: u.typo3Backend}}
	if next := r.URL.Query().Get("next"); localPath(next) {
		p.Login.Next = next
	}
	if r.URL.Query().Get("expired") != "" {
		p.Login.Error = t.Get("login.expired")
	}
	u.render(w, r, "login", "layout", p, http.StatusOK)
}

// handleLogin checks the password through the API's login path (the same
// refusals and throttling) and sends the browser to the chat. The form is
// sent by htmx: a request without its HX-Request header, or one a browser
// marks cross-site, is refused, which keeps other sites from logging a
// browser in (the JSON API requires a JSON body for the same reason).
func (u *UI) handleLogin(w http.ResponseWriter, r *http.Request) {
	t := catalog.For(acceptLanguage(r))
	if !formTextOK(r) {
		// The form again with the sentence in place (htmx swaps only 2xx
		// answers); the refused text is not echoed. Nothing is checked.
		p := &page{T: t, Title: t.Get("login.title"), Login: &loginData{Error: t.Get("error.invalid_text")}}
		w.Header().Set(refusedHeader, "invalid_text")
		u.render(w, r, "login", "login-form", p, http.StatusOK)
		return
	}
	p := &page{T: t, Title: t.Get("login.title"), Login: &loginData{Username: r.PostFormValue("username")}}
	if next := r.PostFormValue("next"); localPath(next) {
		p.Login.Next = next
	}
	if r.Header.Get("HX-Request") != "true" || r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		p.Login.Error = t.Get("login.refused")
		u.render(w, r, "login", "login-form", p, http.StatusForbidden)
		return
	}
	// The CSRF cookie lives no longer than its session: the session's
	// lifetime, counted from before the session was made.
	expires := u.API.Now().Add(auth.SessionTTL)
	csrf, err := u.API.PasswordLogin(r.Context(), w, r, r.PostFormValue("username"), r.PostFormValue("password"))
	if err != nil {
		status, code := httpapi.Classify(err)
		switch {
		case code == "bad_request":
			p.Login.Error = t.Get("login.missing")
		case code == "mfa_required":
			p.Login.Error = t.Get("login.mfaRequired")
		case code == "password_login_off":
			p.Login.Error = t.Get("login.passwordOff")
		case code == auth.ErrPasswordTooLong.Code():
			p.Login.Error = t.Get("login.tooLong")
		case status == http.StatusUnauthorized:
			p.Login.Error = t.Get("login.wrong")
		case status == http.StatusTooManyRequests:
			p.Login.Error = t.Get("login.throttled")
		case status == http.StatusServiceUnavailable && hasKey("error."+code):
			u.logErr(r.Context(), "login", err)
			p.Login.Error = t.Get("error." + code) // e.g. TYPO3 does not answer: try again
		default:
			u.logErr(r.Context(), "login", err)
			p.Login.Error = t.Get("error.internal")
		}
		// htmx swaps only 2xx answers: the form with its message comes back as 200.
		u.render(w, r, "login", "login-form", p, http.StatusOK)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: csrf, Path: "/", HttpOnly: true, Secure: u.API.CookieSecure(r),
		SameSite: http.SameSiteStrictMode, Expires: expires})
	// Back to the screen the session ended on (a local path only), else
	// home: / sends the new session on (an administrator to the administration).
	to := "/"
	if p.Login.Next != "" {
		to = p.Login.Next
	}
	w.Header().Set("HX-Redirect", to)
	w.WriteHeader(http.StatusOK)
}

// handleLogout ends the session and returns to the login page.
func (u *UI) handleLogout(w http.ResponseWriter, r *http.Request, me *user) {
	if err := u.API.SessionEnd(w, r); err != nil {
		u.logErr(r.Context(), "logout", err)
	}
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: u.API.CookieSecure(r),
		SameSite: http.SameSiteStrictMode})
	redirect(w, r, "/login")
}
