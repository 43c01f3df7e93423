package hostile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"waymark/internal/fixture"
	"waymark/internal/httpapi"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// session is a browser session: its cookie and CSRF token.
type session struct {
	cookie *http.Cookie
	csrf   string
}

func loggedIn(t *testing.T, e *wt.Env, user, pw string) session {
	t.Helper()
	r := login(e, user, pw)
	if r.Status != http.StatusOK {
		t.Fatalf("login %s = %d %s", user, r.Status, r.Body)
	}
	var ans struct {
		CSRFToken string `json:"csrfToken"`
	}
	r.JSON(t, &ans)
	return session{cookie: sessionCookie(t, r), csrf: ans.CSRFToken}
}

// do sends a request in session s and answers its status.
func (s session) do(t *testing.T, e *wt.Env, method, path string, body any) int {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, e.URL+path, rd)
	req.AddCookie(s.cookie)
	req.Header.Set(httpapi.CSRFHeader, s.csrf)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// Changing a password did not end the sessions opened with the old one. A
// new password now ends them: an administrator changing their own password
// keeps only the session that changed it; an administrator setting another
// user's password ends all of that user's sessions. The new password logs in.
func TestChangedPasswordEndsTheSessionsOpenedWithTheOldOne(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newLoginEnvWith(t, db, nil)
		if _, err := fixture.Import(context.Background(), db, []byte(`
users:
  - {uid: 8, username: admin2, password: admin2-pw, admin: true, backendLanguage: en}
`), "admin2.yaml", e.App.FixtureOptions()); err != nil {
			t.Fatal(err)
		}
		here, there := loggedIn(t, e, "admin2", "admin2-pw"), loggedIn(t, e, "admin2", "admin2-pw")
		erika := loggedIn(t, e, "erika2", "erika-pw")

		// Their own password: this session stays, the other one ends.
		own := map[string]any{"username": "admin2", "password": "admin2-new-pw", "admin": true}
		if got := here.do(t, e, "PUT", "/api/admin/users/8", own); got != http.StatusOK {
			t.Fatalf("own password change = %d", got)
		}
		if got := here.do(t, e, "GET", "/api/me", nil); got != http.StatusOK {
			t.Errorf("the session that changed the password: /api/me = %d, want 200", got)
		}
		if got := there.do(t, e, "GET", "/api/me", nil); got != http.StatusUnauthorized {
			t.Errorf("the other session of the old password: /api/me = %d, want 401", got)
		}
		if got := erika.do(t, e, "GET", "/api/me", nil); got != http.StatusOK {
			t.Errorf("another user's session after admin2's change: /api/me = %d, want 200", got)
		}

		// Another user's password set by an administrator: all of that user's sessions end.
		other := map[string]any{"username": "erika2", "password": "erika-new-pw", "groups": []int{1}}
		if got := here.do(t, e, "PUT", "/api/admin/users/6", other); got != http.StatusOK {
			t.Fatalf("admin sets erika2's password = %d", got)
		}
		if got := erika.do(t, e, "GET", "/api/me", nil); got != http.StatusUnauthorized {
			t.Errorf("erika2's session after the admin set her password: /api/me = %d, want 401", got)
		}
		if got := here.do(t, e, "GET", "/api/me", nil); got != http.StatusOK {
			t.Errorf("the admin's session after setting another's password: /api/me = %d, want 200", got)
		}
		// An edit that sets no password ends nothing.
		again := loggedIn(t, e, "erika2", "erika-new-pw")
		if got := here.do(t, e, "PUT", "/api/admin/users/6", map[string]any{"username": "erika2", "groups": []int{1}}); got != http.StatusOK {
			t.Fatalf("edit without password = %d", got)
		}
		if got := again.do(t, e, "GET", "/api/me", nil); got != http.StatusOK {
			t.Errorf("erika2's session after an edit without password: /api/me = %d, want 200", got)
		}
		if r := login(e, "erika2", "erika-pw"); r.Status != http.StatusUnauthorized {
			t.Errorf("the old password = %d, want 401", r.Status)
		}
	})
}
