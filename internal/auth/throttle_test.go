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
		a := auth.NewLimited(db, b.clk, auth.Limits{PerUsername: 5, MaxChecks: 2, HashCost: auth.MinCost})
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
		if _, err := a.LoginFrom(context.Background(), "10.0.0.2", "erika", "erika-pw"); !errors.As(err, &te) || te.RetryAfter <= 0 || te.RetryAfter > time.Minute {
			t.Errorf("right password within the window = %v, want ThrottledError with RetryAfter in (0, 1m]", err)
		}
		b.clk.Advance(time.Minute)
		if _, err := a.LoginFrom(context.Background(), "10.0.0.2", "erika", "erika-pw"); err != nil {
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
		a := auth.NewLimited(db, b.clk, auth.Limits{PerUsername: 1, MaxChecks: 1, HashCost: auth.MinCost})
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
