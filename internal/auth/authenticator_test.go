package auth_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"waymark/internal/auth"
	"waymark/internal/clock"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

type bundle struct {
	db   *store.DB
	clk  *clock.Fake
	auth *auth.Authenticator
}

const (
	erikaToken = "wm_erika_token_0001"
	robotToken = "wm_robot_token_0001"
)

// setup seeds erika (uid 7, password "erika-pw"), the service account robot
// (uid 8, password "robot-pw") and the disabled max (uid 9, password "max-pw").
func setup(t *testing.T, db *store.DB) bundle {
	t.Helper()
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	users := []struct {
		uid             int64
		name, pw        string
		robot, disabled bool
	}{
		{7, "erika", "erika-pw", false, false},
		{8, "robot", "robot-pw", true, false},
		{9, "max", "max-pw", false, true},
	}
	for _, u := range users {
		h, err := auth.HashPassword(u.pw, auth.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, "INSERT INTO be_users (uid, username, password_hash, service_account, disabled) VALUES (?, ?, ?, ?, ?)",
			u.uid, u.name, h, u.robot, u.disabled); err != nil {
			t.Fatalf("insert user %s: %v", u.name, err)
		}
	}
	if err := auth.PutTokenTx(ctx, db, 7, erikaToken, "test", clk.Now(), auth.MinCost); err != nil {
		t.Fatal(err)
	}
	if err := auth.PutTokenTx(ctx, db, 8, robotToken, "test", clk.Now(), auth.MinCost); err != nil {
		t.Fatal(err)
	}
	return bundle{db: db, clk: clk, auth: auth.NewLimited(db, clk, auth.Elsewhere{}, auth.Limits{HashCost: auth.MinCost})}
}

func countSessions(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM sessions").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestFromTokenFindsOwnerAndRefusesOthers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ctx := context.Background()
		for token, want := range map[string]int64{erikaToken: 7, robotToken: 8} {
			uid, err := b.auth.FromToken(ctx, token)
			if err != nil || uid != want {
				t.Errorf("FromToken(%s) = %d, %v, want %d", token, uid, err, want)
			}
		}
		for _, bad := range []string{"", "short", "wm_erika_token_0002", erikaToken + "x"} {
			if uid, err := b.auth.FromToken(ctx, bad); !errors.Is(err, auth.ErrUnauthenticated) {
				t.Errorf("FromToken(%q) = %d, %v, want ErrUnauthenticated", bad, uid, err)
			}
		}
	})
}

// Regression: a deleted token kept working for a cache
// minute; the cache now holds for one settings generation, which the
// deletion moves.
func TestDeletedTokenIsRefusedAtOnceNotAfterTheCacheTTL(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ctx := context.Background()
		if _, err := b.auth.FromToken(ctx, erikaToken); err != nil {
			t.Fatalf("first FromToken: %v", err)
		}
		if uid, err := b.auth.FromToken(ctx, erikaToken); err != nil || uid != 7 {
			t.Errorf("cached FromToken = %d, %v, want 7", uid, err)
		}
		if _, err := db.Exec(ctx, "DELETE FROM api_tokens WHERE user_uid = 7"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.auth.FromToken(ctx, erikaToken); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("FromToken of a deleted token = %v, want ErrUnauthenticated at once", err)
		}
		if uid, err := b.auth.FromToken(ctx, robotToken); err != nil || uid != 8 {
			t.Errorf("FromToken of another token = %d, %v, want 8", uid, err)
		}
		b.clk.Advance(61 * time.Second)
		if _, err := b.auth.FromToken(ctx, erikaToken); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("FromToken of a deleted token after the TTL = %v, want ErrUnauthenticated", err)
		}
	})
}

func TestForgetTokensStopsDeletedTokenAtOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ctx := context.Background()
		if _, err := b.auth.FromToken(ctx, erikaToken); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, "DELETE FROM api_tokens WHERE user_uid = 7"); err != nil {
			t.Fatal(err)
		}
		b.auth.ForgetTokens()
		if _, err := b.auth.FromToken(ctx, erikaToken); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("FromToken after ForgetTokens = %v, want ErrUnauthenticated", err)
		}
	})
}

func TestLoginRefusesAlikeAndCreatesNoSession(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		cases := []struct{ name, user, pw string }{
			{"wrong password", "erika", "nope"},
			{"unknown user", "nobody", "erika-pw"},
			{"service account", "robot", "robot-pw"},
			{"disabled user", "max", "max-pw"},
			{"empty password", "erika", ""},
		}
		for _, c := range cases {
			if s, err := b.auth.Login(context.Background(), c.user, c.pw); !errors.Is(err, auth.ErrUnauthenticated) {
				t.Errorf("Login(%s) = %+v, %v, want ErrUnauthenticated", c.name, s, err)
			}
		}
		if n := countSessions(t, db); n != 0 {
			t.Errorf("sessions after refused logins = %d, want 0", n)
		}
	})
}

func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ctx := context.Background()
		s, err := b.auth.Login(ctx, "erika", "erika-pw")
		if err != nil {
			t.Fatalf("Login: %v", err)
		}
		if s.UID != 7 || s.ID == "" || s.CSRF == "" || s.ID == s.CSRF || !s.Expires.Equal(b.clk.Now().Add(12*time.Hour)) {
			t.Fatalf("Login = %+v, want uid 7, distinct id and csrf, expiry in 12h", s)
		}
		var stored string
		if err := db.QueryRow(ctx, "SELECT id_hash FROM sessions").Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if stored == s.ID {
			t.Error("session id stored in clear")
		}
		uid, csrf, err := b.auth.FromSession(ctx, s.ID)
		if err != nil || uid != 7 || csrf != s.CSRF {
			t.Errorf("FromSession = %d, %q, %v, want 7, %q", uid, csrf, err, s.CSRF)
		}
		if _, _, err := b.auth.FromSession(ctx, s.ID+"x"); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("FromSession(unknown) = %v, want ErrUnauthenticated", err)
		}
		if err := b.auth.Logout(ctx, s.ID); err != nil {
			t.Fatalf("Logout: %v", err)
		}
		if _, _, err := b.auth.FromSession(ctx, s.ID); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("FromSession after Logout = %v, want ErrUnauthenticated", err)
		}
		if n := countSessions(t, db); n != 0 {
			t.Errorf("sessions after Logout = %d, want 0", n)
		}
	})
}

func TestSessionExpiresAfter12HoursAndIsPurged(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ctx := context.Background()
		s, err := b.auth.Login(ctx, "erika", "erika-pw")
		if err != nil {
			t.Fatal(err)
		}
		b.clk.Advance(12*time.Hour - time.Second)
		if _, _, err := b.auth.FromSession(ctx, s.ID); err != nil {
			t.Errorf("FromSession just before expiry = %v, want success", err)
		}
		if n, err := b.auth.PurgeSessions(ctx); err != nil || n != 0 {
			t.Errorf("PurgeSessions before expiry = %d, %v, want 0", n, err)
		}
		b.clk.Advance(time.Second)
		if _, _, err := b.auth.FromSession(ctx, s.ID); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("FromSession at expiry = %v, want ErrUnauthenticated", err)
		}
		if n, err := b.auth.PurgeSessions(ctx); err != nil || n != 1 {
			t.Errorf("PurgeSessions at expiry = %d, %v, want 1", n, err)
		}
		if n := countSessions(t, db); n != 0 {
			t.Errorf("sessions after purge = %d, want 0", n)
		}
	})
}
