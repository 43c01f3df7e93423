package hostile_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"waymark/internal/clock"
	"waymark/internal/fixture"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// passwordUsers are two users of wt.Site's group 1 with passwords.
const passwordUsers = `
users:
  - {uid: 6, username: erika2, password: erika-pw, groups: [1], backendLanguage: de}
  - {uid: 7, username: paula2, password: paula-pw, groups: [1], backendLanguage: en}
`

// newLoginEnv is wt.Site plus passwordUsers on clk.
func newLoginEnv(t *testing.T, db *store.DB, clk clock.Clock) *wt.Env {
	t.Helper()
	return newLoginEnvWith(t, db, &wt.Options{Clock: clk})
}

// newLoginEnvWith is wt.Site plus passwordUsers with opts.
func newLoginEnvWith(t *testing.T, db *store.DB, opts *wt.Options) *wt.Env {
	t.Helper()
	e := wt.New(t, db, wt.Site, opts)
	if _, err := fixture.Import(context.Background(), db, []byte(passwordUsers), "users.yaml", e.App.FixtureOptions()); err != nil {
		t.Fatal(err)
	}
	return e
}

func login(e *wt.Env, user, pw string) wt.Response {
	return e.As("").Do("POST", "/api/login", map[string]string{"username": user, "password": pw})
}

func wantThrottled(t *testing.T, what string, r wt.Response) {
	t.Helper()
	if r.Status != http.StatusTooManyRequests || r.ErrorCode() != "too_many_attempts" {
		t.Errorf("%s = %d %s, want 429 too_many_attempts", what, r.Status, r.Body)
	}
}

// After five failed logins of one username within a minute
// the next attempt — even with the right password — answers 429 with
// Retry-After, other users log in meanwhile, and the rightful user logs in
// once the window has passed.
func TestLoginThrottledPerUsernameThenWorksAfterTheWindow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
		e := newLoginEnv(t, db, clk)
		for i := range 5 {
			if r := login(e, "erika2", "wrong"); r.Status != http.StatusUnauthorized {
				t.Fatalf("failed login %d = %d %s, want 401", i+1, r.Status, r.Body)
			}
		}
		r := login(e, "erika2", "erika-pw")
		wantThrottled(t, "sixth login of erika2 with the right password", r)
		if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
			t.Errorf("Retry-After = %q, want 1…60 seconds", r.Header.Get("Retry-After"))
		}
		if n := count(t, e, "sessions"); n != 0 {
			t.Errorf("sessions while throttled = %d, want 0", n)
		}
		if r := login(e, "paula2", "paula-pw"); r.Status != http.StatusOK {
			t.Errorf("login of another user meanwhile = %d %s, want 200", r.Status, r.Body)
		}
		clk.Advance(61 * time.Second)
		if r := login(e, "erika2", "erika-pw"); r.Status != http.StatusOK {
			t.Errorf("login of erika2 after the window = %d %s, want 200", r.Status, r.Body)
		}
	})
}

// Failures are limited per client address too, so guessing
// across many usernames from one address is throttled.
func TestLoginThrottledPerClientAddress(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
		e := newLoginEnv(t, db, clk)
		for i := range 20 {
			if r := login(e, fmt.Sprintf("guess%d", i), "wrong"); r.Status != http.StatusUnauthorized {
				t.Fatalf("failed login %d = %d %s, want 401", i+1, r.Status, r.Body)
			}
		}
		wantThrottled(t, "login from an address with 20 failures", login(e, "paula2", "paula-pw"))
		clk.Advance(61 * time.Second)
		if r := login(e, "paula2", "paula-pw"); r.Status != http.StatusOK {
			t.Errorf("login after the window = %d %s, want 200", r.Status, r.Body)
		}
	})
}
