package auth_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"waymark/internal/auth"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// Concurrent tries cannot pass the limit together: of 12 wrong passwords
// sent at once, exactly 5 are checked and the rest are throttled.
func TestConcurrentFailedLoginsStopAtTheLimit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		a := auth.NewLimited(db, b.clk, auth.Elsewhere{}, auth.Limits{PerUsername: 5, MaxChecks: 2, HashCost: auth.MinCost})
		var wg sync.WaitGroup
		var mu sync.Mutex
		got := map[string]int{}
		for range 12 {
			wg.Go(func() {
				_, err := a.LoginFrom(context.Background(), "10.0.0.1", "erika", "wrong")
				var te *auth.ThrottledError
				kind := "other"
				switch {
				case errors.As(err, &te):
					kind = "throttled"
				case errors.Is(err, auth.ErrUnauthenticated):
					kind = "refused"
				}
				mu.Lock()
				got[kind]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if got["refused"] != 5 || got["throttled"] != 7 {
			t.Errorf("12 concurrent wrong logins = %v, want 5 refused and 7 throttled", got)
		}
		var te *auth.ThrottledError
		if _, err := a.LoginFrom(context.Background(), "10.0.0.1", "erika", "erika-pw"); !errors.As(err, &te) || te.RetryAfter <= 0 || te.RetryAfter > time.Minute {
			t.Errorf("right password within the window from the failing client = %v, want ThrottledError with RetryAfter in (0, 1m]", err)
		}
		b.clk.Advance(time.Minute)
		if _, err := a.LoginFrom(context.Background(), "10.0.0.1", "erika", "erika-pw"); err != nil {
			t.Errorf("right password after the window = %v, want a session", err)
		}
	})
}

// The bcrypt work of logins is bounded: with every check slot taken a login
// waits (here until its context ends) instead of comparing, and that wait
// counts as no failure.
func TestPasswordChecksBeyondTheBoundWait(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		a := auth.NewLimited(db, b.clk, auth.Elsewhere{}, auth.Limits{PerUsername: 1, MaxChecks: 1, HashCost: auth.MinCost})
		release := a.HoldChecks()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := a.LoginFrom(ctx, "", "erika", "erika-pw"); !errors.Is(err, context.Canceled) {
			t.Errorf("login with every check slot taken = %v, want it to wait until its context ends", err)
		}
		release()
		if _, err := a.LoginFrom(context.Background(), "", "erika", "erika-pw"); err != nil {
			t.Errorf("login once a slot is free = %v, want a session (the wait counted no failure)", err)
		}
	})
}

// A flood of wrong passwords for a user from one client does not lock the
// user out of another client: the username over its limit is refused only
// to clients that failed it. A client that then fails once is refused too,
// and the flooding client stays refused, right password or not.
func TestFailedLoginsFromOneClientDoNotLockTheUserOutOfAnother(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		a := auth.NewLimited(db, b.clk, auth.Elsewhere{}, auth.Limits{PerUsername: 5, PerClient: 20, HashCost: auth.MinCost})
		ctx := context.Background()
		var te *auth.ThrottledError
		for i := range 20 {
			_, err := a.LoginFrom(ctx, "198.51.100.7", "erika", "wrong")
			if i < 5 && (!errors.Is(err, auth.ErrUnauthenticated) || errors.As(err, &te)) {
				t.Fatalf("wrong password %d from the attacker = %v, want refused (not throttled)", i+1, err)
			}
			if i >= 5 && !errors.As(err, &te) {
				t.Fatalf("wrong password %d from the attacker = %v, want throttled", i+1, err)
			}
		}
		if _, err := a.LoginFrom(ctx, "198.51.100.7", "erika", "erika-pw"); !errors.As(err, &te) {
			t.Errorf("right password from the flooding client = %v, want throttled", err)
		}
		if _, err := a.LoginFrom(ctx, "203.0.113.9", "erika", "erika-pw"); err != nil {
			t.Errorf("right password from erika's own client after the flood = %v, want a session", err)
		}
		// Once over the limit, a client gets one wrong try at the username.
		if _, err := a.LoginFrom(ctx, "192.0.2.1", "erika", "wrong"); errors.As(err, &te) || !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("first wrong password from a third client = %v, want refused (not throttled)", err)
		}
		if _, err := a.LoginFrom(ctx, "192.0.2.1", "erika", "erika-pw"); !errors.As(err, &te) {
			t.Errorf("right password from the third client after its failure = %v, want throttled", err)
		}
		// The attacker's 20 failures (5 counted) leave it free for other
		// usernames up to its own limit.
		if _, err := a.LoginFrom(ctx, "198.51.100.7", "max", "wrong"); errors.As(err, &te) {
			t.Errorf("another username from the attacker = %v, want refused, not throttled, below the client limit", err)
		}
	})
}

// A client over its own limit is refused whatever the username.
func TestClientOverItsLimitIsRefusedForEveryUsername(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		a := auth.NewLimited(db, b.clk, auth.Elsewhere{}, auth.Limits{PerUsername: 5, PerClient: 3, HashCost: auth.MinCost})
		ctx := context.Background()
		for _, name := range []string{"nobody1", "nobody2", "nobody3"} {
			if _, err := a.LoginFrom(ctx, "198.51.100.7", name, "wrong"); !errors.Is(err, auth.ErrUnauthenticated) {
				t.Fatalf("wrong login of %s = %v", name, err)
			}
		}
		var te *auth.ThrottledError
		if _, err := a.LoginFrom(ctx, "198.51.100.7", "erika", "erika-pw"); !errors.As(err, &te) {
			t.Errorf("right password from a client over its limit = %v, want throttled", err)
		}
		if _, err := a.LoginFrom(ctx, "203.0.113.9", "erika", "erika-pw"); err != nil {
			t.Errorf("right password from another client = %v, want a session", err)
		}
	})
}
