package auth_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"waymark/internal/auth"
	"waymark/internal/clock"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// A service account or a user without a password answered a login at once
// while every other failure costs a bcrypt comparison, so their names could
// be read from the timing: their login now does the same hashing work. The
// bcrypt cost is the production one here, so the difference is ~60 ms.
func TestLoginOfAUserWithoutPasswordTakesAsLongAsAWrongPassword(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		h, err := auth.HashPassword("erika-pw", auth.DefaultCost)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range []struct {
			uid         int64
			name, hash  string
			serviceAcct bool
		}{{7, "erika", h, false}, {8, "robot", "", true}, {9, "tokenonly", "", false}} {
			if _, err := db.Exec(ctx, "INSERT INTO be_users (uid, username, password_hash, service_account) VALUES (?, ?, ?, ?)",
				u.uid, u.name, u.hash, u.serviceAcct); err != nil {
				t.Fatal(err)
			}
		}
		a := auth.NewLimited(db, clock.NewFake(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)), auth.Elsewhere{},
			auth.Limits{PerUsername: 100, PerClient: 100, HashCost: auth.DefaultCost})
		// The fastest of five interleaved rounds per name: the machine's load
		// slows every name alike; a login without hashing stays ~100× faster.
		users := []string{"erika", "robot", "tokenonly", "nobody"}
		fastest := map[string]time.Duration{}
		for range 5 {
			for _, user := range users {
				start := time.Now()
				_, err := a.Login(ctx, user, "wrong-password")
				if !errors.Is(err, auth.ErrUnauthenticated) {
					t.Fatalf("Login(%s) = %v, want ErrUnauthenticated", user, err)
				}
				if d := time.Since(start); fastest[user] == 0 || d < fastest[user] {
					fastest[user] = d
				}
			}
		}
		wrong := fastest["erika"]
		for _, user := range users[1:] {
			if got := fastest[user]; got < wrong/4 {
				t.Errorf("login of %s took %v, a wrong password %v: the name can be told apart by the timing", user, got, wrong)
			}
		}
	})
}

// bcrypt reads only the first 72 bytes of a password: a longer one logged
// in when its first 72 bytes matched. A login with more than 72 bytes is
// refused as ErrPasswordTooLong, creating no session, and the password of
// exactly 72 bytes still logs in.
func TestPasswordLongerThan72BytesIsRefusedNotMatchedOnItsPrefix(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		pw := strings.Repeat("p", 72)
		h, err := auth.HashPassword(pw, auth.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, "INSERT INTO be_users (uid, username, password_hash) VALUES (7, 'erika', ?)", h); err != nil {
			t.Fatal(err)
		}
		a := auth.NewLimited(db, clock.NewFake(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)), auth.Elsewhere{}, auth.Limits{HashCost: auth.MinCost})
		if _, err := a.Login(ctx, "erika", pw+"anything"); !errors.Is(err, auth.ErrPasswordTooLong) {
			t.Fatalf("Login with 80 bytes = %v, want ErrPasswordTooLong", err)
		}
		if n := countSessions(t, db); n != 0 {
			t.Fatalf("sessions = %d after the refused login, want 0", n)
		}
		if _, err := a.Login(ctx, "erika", pw); err != nil {
			t.Fatalf("Login with the 72 bytes = %v", err)
		}
		if _, err := auth.HashPassword(pw+"x", auth.MinCost); err == nil {
			t.Error("HashPassword accepted 73 bytes")
		}
	})
}
