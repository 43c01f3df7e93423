package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"waymark/internal/httpapi"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

type loginAnswer struct {
	CSRFToken string     `json:"csrfToken"`
	User      httpapi.Me `json:"user"`
}

// login logs erika in and returns her session cookie and CSRF token.
func (b bundle) login(t *testing.T) (*http.Cookie, string) {
	t.Helper()
	a := b.do(t, call{method: "POST", path: "/api/login", body: `{"username":"erika","password":"erika-pw"}`})
	if a.status != http.StatusOK {
		t.Fatalf("POST /api/login = %d %s", a.status, a.body)
	}
	res := http.Response{Header: a.header}
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == httpapi.SessionCookie {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatalf("POST /api/login set no %s cookie: %v", httpapi.SessionCookie, a.header)
	}
	got := decode[loginAnswer](t, a)
	if got.CSRFToken == "" || got.User.UID != 7 || got.User.Username != "erika" {
		t.Fatalf("POST /api/login = %s, want a csrf token and erika", a.body)
	}
	return cookie, got.CSRFToken
}

func TestLoginSetsSessionCookieThatAuthenticates(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		cookie, _ := b.login(t)
		if !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Path != "/" || cookie.Value == "" {
			t.Errorf("cookie = %+v, want HttpOnly, SameSite=Lax, Path=/", cookie)
		}
		if n := countSessions(t, db); n != 1 {
			t.Errorf("sessions = %d, want 1", n)
		}
		a := b.do(t, call{method: "GET", path: "/api/me", cookie: &http.Cookie{Name: cookie.Name, Value: cookie.Value}})
		if a.status != http.StatusOK || decode[httpapi.Me](t, a).UID != 7 {
			t.Errorf("GET /api/me with cookie = %d %s, want erika", a.status, a.body)
		}
	})
}

func TestCookieStateChangeNeedsCSRFHeader(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		cookie, csrf := b.login(t)
		c := &http.Cookie{Name: cookie.Name, Value: cookie.Value}
		for name, header := range map[string]string{"no header": "", "wrong header": csrf + "x"} {
			a := b.do(t, call{method: "POST", path: "/api/logout", cookie: c, csrf: header})
			wantError(t, "POST /api/logout with "+name, a, http.StatusForbidden, "csrf")
		}
		if n := countSessions(t, db); n != 1 {
			t.Fatalf("sessions after refused logouts = %d, want 1", n)
		}
		a := b.do(t, call{method: "POST", path: "/api/logout", cookie: c, csrf: csrf})
		if a.status != http.StatusNoContent {
			t.Fatalf("POST /api/logout with CSRF header = %d %s, want 204", a.status, a.body)
		}
		if !strings.Contains(a.header.Get("Set-Cookie"), httpapi.SessionCookie+"=;") {
			t.Errorf("logout Set-Cookie = %q, want the cookie cleared", a.header.Get("Set-Cookie"))
		}
		if n := countSessions(t, db); n != 0 {
			t.Errorf("sessions after logout = %d, want 0", n)
		}
		a = b.do(t, call{method: "GET", path: "/api/me", cookie: c})
		wantError(t, "GET /api/me after logout", a, http.StatusUnauthorized, "unauthenticated")
	})
}

func TestBearerStateChangeNeedsNoCSRFHeader(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		if a := b.do(t, call{method: "POST", path: "/api/logout", token: erikaToken}); a.status != http.StatusNoContent {
			t.Errorf("POST /api/logout with token = %d %s, want 204", a.status, a.body)
		}
	})
}

func TestSessionEndsAfter12Hours(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		cookie, _ := b.login(t)
		c := &http.Cookie{Name: cookie.Name, Value: cookie.Value}
		b.clk.Advance(12 * time.Hour)
		a := b.do(t, call{method: "GET", path: "/api/me", cookie: c})
		wantError(t, "GET /api/me after 12h", a, http.StatusUnauthorized, "unauthenticated")
	})
}

func TestLoginRefusalsLookAlikeAndCreateNoSession(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		var first string
		for name, body := range map[string]string{
			"wrong password":  `{"username":"erika","password":"nope"}`,
			"unknown user":    `{"username":"nobody","password":"erika-pw"}`,
			"service account": `{"username":"robot","password":"robot-pw"}`,
			"disabled user":   `{"username":"max","password":"max-pw"}`,
		} {
			a := b.do(t, call{method: "POST", path: "/api/login", body: body})
			msg := wantError(t, "login with "+name, a, http.StatusUnauthorized, "unauthenticated")
			if first == "" {
				first = msg
			} else if msg != first {
				t.Errorf("login with %s says %q, others %q: refusals must look alike", name, msg, first)
			}
			if a.header.Get("Set-Cookie") != "" {
				t.Errorf("login with %s set a cookie", name)
			}
		}
		if n := countSessions(t, db); n != 0 {
			t.Errorf("sessions after refused logins = %d, want 0", n)
		}
	})
}

func TestLoginWithBadRequestIs400AndCreatesNoSession(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		cases := []struct {
			name, body, contentType, wantMsg string
		}{
			{"malformed JSON", `{"username":"erika",`, "", "malformed JSON"},
			{"unknown field", `{"username":"erika","password":"erika-pw","remember":true}`, "", `unknown field "remember"`},
			{"trailing data", `{"username":"erika","password":"erika-pw"} {}`, "", "after the JSON value"},
			{"wrong type", `{"username":7,"password":"erika-pw"}`, "", `field "username"`},
			{"form content type", `username=erika&password=erika-pw`, "application/x-www-form-urlencoded", "Content-Type"},
			{"missing password", `{"username":"erika"}`, "", "required"},
		}
		for _, c := range cases {
			a := b.do(t, call{method: "POST", path: "/api/login", body: c.body, contentType: c.contentType})
			msg := wantError(t, "login with "+c.name, a, http.StatusBadRequest, "bad_request")
			if !strings.Contains(msg, c.wantMsg) || strings.Contains(msg, "\n") {
				t.Errorf("login with %s: message %q, want one line containing %q", c.name, msg, c.wantMsg)
			}
		}
		big := b.do(t, call{method: "POST", path: "/api/login", body: `{"username":"erika","password":"` + strings.Repeat("x", 1<<20) + `"}`})
		if msg := wantError(t, "login over 1 MiB", big, http.StatusRequestEntityTooLarge, "body_too_large"); !strings.Contains(msg, "1 MiB") {
			t.Errorf("login over 1 MiB: message %q, want it to name the limit", msg)
		}
		a := b.do(t, call{method: "POST", path: "/api/login"})
		wantError(t, "login without body", a, http.StatusBadRequest, "bad_request")
		if n := countSessions(t, db); n != 0 {
			t.Errorf("sessions after bad logins = %d, want 0", n)
		}
	})
}
