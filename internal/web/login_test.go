package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// Screen 1: a wrong password shows a clear message and opens no session.
func TestLoginWithWrongPasswordShowsMessageAndOpensNoSession(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		b := newBrowser(t, e)
		a := b.do(http.MethodPost, "/login", url.Values{"username": {"erika"}, "password": {"wrong-password"}}, "de")
		contains(t, "wrong password (de)", a, `role="alert"`, "Benutzername oder Passwort stimmt nicht.")
		if a.Header.Get("HX-Redirect") != "" || len(a.Header.Values("Set-Cookie")) != 0 {
			t.Errorf("a refused login redirected or set cookies: %v", a.Header)
		}
		a = b.do(http.MethodPost, "/login", url.Values{"username": {"erika"}, "password": {"wrong-password"}}, "en")
		contains(t, "wrong password (en)", a, "Wrong username or password.")
		if got := b.get("/chat"); got.Status != http.StatusSeeOther || got.Header.Get("Location") != "/login" {
			t.Errorf("GET /chat after a refused login = %d %q, want 303 to /login", got.Status, got.Header.Get("Location"))
		}
	})
}

// Screen 1: / leads to the login; the right password opens the chat; logout ends the session.
func TestLoginOpensTheChatAndLogoutEndsTheSession(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		b := newBrowser(t, e)
		if a := b.get("/"); a.Status != http.StatusSeeOther || a.Header.Get("Location") != "/login" {
			t.Fatalf("GET / = %d %q, want 303 to /login", a.Status, a.Header.Get("Location"))
		}
		lp := b.get("/login")
		contains(t, "login page", lp, `<label for="username">`, `<label for="password">`, `<button type="submit">`,
			`<script src="/assets/htmx.min.js?v=`)
		if csp := lp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("login page CSP = %q", csp)
		}
		if a := b.get("/assets/htmx.min.js"); a.Status != http.StatusOK || !strings.HasPrefix(a.Header.Get("Content-Type"), "text/javascript") {
			t.Errorf("GET /assets/htmx.min.js = %d %s", a.Status, a.Header.Get("Content-Type"))
		}
		b = login(t, e, "erika", "erika-pass-1234")
		chat := b.get("/chat")
		contains(t, "chat (de)", chat, "Unterhaltung beginnen", "Angemeldet als erika", "Abmelden", "> Home</label>", "Kein Prozess")
		if a := b.get("/login"); a.Status != http.StatusSeeOther || a.Header.Get("Location") != "/chat" {
			t.Errorf("GET /login while signed in = %d %q, want 303 to /chat", a.Status, a.Header.Get("Location"))
		}
		if a := b.get("/"); a.Status != http.StatusSeeOther || a.Header.Get("Location") != "/chat" {
			t.Errorf("GET / while signed in = %d %q, want 303 to /chat", a.Status, a.Header.Get("Location"))
		}
		if a := b.post("/logout", nil); a.Header.Get("HX-Redirect") != "/login" {
			t.Fatalf("logout = %d %q, want HX-Redirect /login", a.Status, a.Header.Get("HX-Redirect"))
		}
		if a := b.get("/chat"); a.Status != http.StatusSeeOther {
			t.Errorf("GET /chat after logout = %d, want 303 to the login", a.Status)
		}
	})
}

// The login form refuses a request htmx did not send (a cross-site form), and
// a state-changing request without the CSRF header changes nothing.
func TestLoginRefusesForeignFormsAndActionsNeedTheCSRFHeader(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		resp, err := http.PostForm(e.URL+"/login", url.Values{"username": {"erika"}, "password": {"erika-pass-1234"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || len(resp.Header.Values("Set-Cookie")) != 0 {
			t.Errorf("plain form login = %d %v, want 403 without cookies", resp.StatusCode, resp.Header.Values("Set-Cookie"))
		}
		b := login(t, e, "erika", "erika-pass-1234")
		b.csrf = ""
		a := b.post("/chat", url.Values{"page": {"1"}, "language": {"0"}})
		// Refused as a page whose session ended: the page says so and keeps what was typed.
		if a.Status != http.StatusUnauthorized || a.Header.Get("X-Waymark-Session-Ended") == "" {
			t.Errorf("POST /chat without CSRF = %d, want 401 marked session-ended", a.Status)
		}
		var n int
		if err := db.QueryRow(t.Context(), "SELECT COUNT(*) FROM conversations").Scan(&n); err != nil || n != 0 {
			t.Errorf("conversations after a refused start = %d (%v), want 0", n, err)
		}
	})
}

// Screen 1: the login path's throttling shows as a message.
func TestLoginThrottlingShowsAMessage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		b := newBrowser(t, e)
		var a answer
		for i := 0; i < 10 && !strings.Contains(a.Body, "Zu viele Fehlversuche"); i++ {
			a = b.do(http.MethodPost, "/login", url.Values{"username": {"erika"}, "password": {"wrong-password"}}, "de")
		}
		contains(t, "throttled login", a, `role="alert"`, "Zu viele Fehlversuche. Warte bitte")
		if a.Header.Get("Retry-After") == "" {
			t.Errorf("a throttled login has no Retry-After")
		}
	})
}

// An administrator lands on the administration after logging in (and on /
// and /login while signed in); an editor in the chat.
func TestAnAdministratorLandsOnTheAdministrationAfterLogin(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := skillsEnv(t, db, nil)
		b := login(t, e, "admin", "admin-pass-1234")
		for _, path := range []string{"/", "/login"} {
			if a := b.get(path); a.Status != http.StatusSeeOther || a.Header.Get("Location") != "/admin" {
				t.Errorf("GET %s as the administrator = %d %q, want 303 to /admin", path, a.Status, a.Header.Get("Location"))
			}
		}
		if a := b.get("/login?next=/chat/7"); a.Header.Get("Location") != "/chat/7" {
			t.Errorf("GET /login?next=/chat/7 as the administrator = %q, want the page asked for", a.Header.Get("Location"))
		}
	})
}
