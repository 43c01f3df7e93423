package web

import (
	"fmt"
	"html/template"
	"net/http"

	"waymark/internal/auth"
	"waymark/internal/catalog"
	"waymark/internal/httpapi"
)

// handleTicket is where the TYPO3 extension sends a backend user signed in
// to TYPO3 (GET /typo3/enter?ticket=…, docs/typo3-bridge.md): the API's
// TicketLogin opens her session, and she lands on the process menu of the
// page and language she came from, or in the chat. A refused ticket shows
// the login page with the sentence that says what to do.
func (u *UI) handleTicket(w http.ResponseWriter, r *http.Request) {
	t := catalog.For(acceptLanguage(r))
	expires := u.API.Now().Add(auth.SessionTTL)
	csrf, ticket, err := u.API.TicketLogin(r.Context(), w, r, r.URL.Query().Get("ticket"))
	if err != nil {
		status, code := httpapi.Classify(err)
		u.log.InfoContext(r.Context(), "sign-in from TYPO3 refused", "code", code, "err", err)
		p := &page{T: t, Title: t.Get("login.title"), Login: &loginData{TYPO3: u.typo3Backend}}
		switch {
		case status == http.StatusServiceUnavailable:
			p.Login.Error = t.Get("error.typo3_unavailable")
		case code == "typo3_bridge_off":
			p.Login.Error = t.Get("login.bridgeOff")
		default:
			p.Login.Error = t.Get("login.badTicket")
		}
		u.render(w, r, "login", "layout", p, status)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: csrf, Path: "/", HttpOnly: true, Secure: u.API.CookieSecure(r),
		SameSite: http.SameSiteStrictMode, Expires: expires})
	to := "/chat"
	if ticket.Page > 0 {
		to = fmt.Sprintf("/chat?page=%d&language=%d", ticket.Page, ticket.Language)
	}
	// The browser came from TYPO3, another site: a cookie marked SameSite
	// Strict (the CSRF cookie) is not sent on a redirect of that navigation.
	// This page moves on by itself, a navigation of Waymark's own.
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	fmt.Fprintf(w, `<!doctype html><html lang="%s"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=%s"><title>Waymark</title></head><body><p><a href="%s">%s</a></p></body></html>`,
		template.HTMLEscapeString(t.Lang()), template.HTMLEscapeString(to), template.HTMLEscapeString(to), template.HTMLEscapeString(t.Get("login.continue")))
}
