package hostile_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"waymark/internal/httpapi"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// The UI's assets and /metrics answered without X-Content-Type-Options, and
// no answer carried Strict-Transport-Security: every answer now says
// nosniff, and HSTS is sent when the server is reached over HTTPS (Secure
// cookies: an https public URL, or TLS), never over plain HTTP.
func TestNosniffOnAssetsAndMetricsAndHSTSOnlyOverHTTPS(t *testing.T) {
	for _, secure := range []bool{false, true} {
		e := newLoginEnvWith(t, storetest.SQLite(t), &wt.Options{SecureCookies: secure})
		for _, path := range []string{"/assets/htmx.min.js", "/assets/app.css", "/metrics", "/healthz", "/login"} {
			r := e.As("").Do("GET", path, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("GET %s = %d", path, r.Status)
			}
			if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("secure %v: GET %s X-Content-Type-Options = %q, want nosniff", secure, path, got)
			}
			hsts := r.Header.Get("Strict-Transport-Security")
			if secure && !strings.HasPrefix(hsts, "max-age=") {
				t.Errorf("secure: GET %s Strict-Transport-Security = %q, want max-age=…", path, hsts)
			}
			if !secure && hsts != "" {
				t.Errorf("plain HTTP: GET %s Strict-Transport-Security = %q, want none", path, hsts)
			}
		}
	}
}

// The web login's CSRF cookie lived 30 days, its session 12 hours: it now
// expires no later than the session cookie, and with it.
func TestCSRFCookieLivesNoLongerThanItsSession(t *testing.T) {
	e := newLoginEnvWith(t, storetest.SQLite(t), nil)
	form := url.Values{"username": {"erika2"}, "password": {"erika-pw"}}
	r := e.As("").DoHeaders("POST", "/login", form.Encode(), map[string]string{
		"Content-Type": "application/x-www-form-urlencoded", "HX-Request": "true"})
	if r.Status != http.StatusOK || r.Header.Get("HX-Redirect") != "/" { // home: the chat for an editor, the administration for an administrator
		t.Fatalf("web login = %d %v %s", r.Status, r.Header, r.Body)
	}
	var sess, csrf *http.Cookie
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		switch c.Name {
		case httpapi.SessionCookie:
			sess = c
		case "waymark_csrf":
			csrf = c
		}
	}
	if sess == nil || csrf == nil {
		t.Fatalf("cookies = %v, want the session and the CSRF cookie", r.Header.Values("Set-Cookie"))
	}
	if csrf.Expires.IsZero() || csrf.Expires.After(sess.Expires) || sess.Expires.Sub(csrf.Expires) > time.Minute {
		t.Errorf("CSRF cookie expires %v, session %v: want the session's expiry", csrf.Expires, sess.Expires)
	}
}
