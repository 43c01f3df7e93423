package hostile_test

import (
	"net/http"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// bcrypt reads only the first 72 bytes of a password, so a longer password
// logged in when its first 72 bytes matched. Setting one longer than 72
// bytes is refused (400, the field named), and so is a login with one
// (400 password_too_long, no session); the 72 bytes themselves log in.
func TestPasswordLongerThan72BytesIsRefusedAtLoginAndWhenSet(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newLoginEnv(t, db, nil)
		admin := e.As(wt.Admin)
		pw := strings.Repeat("a", 72)
		r := admin.Do("PUT", "/api/admin/users/6", map[string]any{"username": "erika2", "password": pw + "b", "groups": []int{1}})
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "password") || !strings.Contains(string(r.Body), "72") {
			t.Fatalf("setting 73 bytes = %d %s, want 400 naming the password and 72 bytes", r.Status, r.Body)
		}
		if r := login(e, "erika2", "erika-pw"); r.Status != http.StatusOK {
			t.Fatalf("the refused set changed the password: old login = %d %s", r.Status, r.Body)
		}
		admin.Must("PUT", "/api/admin/users/6", map[string]any{"username": "erika2", "password": pw, "groups": []int{1}}, http.StatusOK)
		sessions := count(t, e, "sessions")
		r = login(e, "erika2", pw+"-and-more-that-bcrypt-never-reads")
		if r.Status != http.StatusBadRequest || r.ErrorCode() != "password_too_long" || !strings.Contains(string(r.Body), "72 bytes") {
			t.Errorf("login with 105 bytes = %d %s, want 400 password_too_long", r.Status, r.Body)
		}
		if n := count(t, e, "sessions"); n != sessions {
			t.Errorf("sessions = %d after the refused login, want %d", n, sessions)
		}
		if r := login(e, "erika2", pw); r.Status != http.StatusOK {
			t.Errorf("login with the 72 bytes = %d %s, want 200", r.Status, r.Body)
		}
	})
}
