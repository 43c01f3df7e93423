package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// Only a database that cannot be reached is worth waiting for: a refused
// connection, one dropped mid-statement, a server shutting down or
// starting. A statement the database refused, the caller's own deadline,
// an injected fault and a pool this process closed are not.
func TestUnreachableIsTrueOnlyForADatabaseThatCannotBeReached(t *testing.T) {
	t.Parallel()
	_, refused := store.Open(context.Background(), "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	if refused == nil {
		t.Fatal("a database on port 1 answered")
	}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", refused, true},
		{"dropped mid-statement", fmt.Errorf("read settings generation: %w", io.ErrUnexpectedEOF), true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"cannot connect now", fmt.Errorf("begin: %w", &pgconn.PgError{Code: "57P03"}), true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"serialization failure", &pgconn.PgError{Code: "40001"}, false},
		{"no rows", sql.ErrNoRows, false},
		{"closed pool", fmt.Errorf("query: %w", sql.ErrConnDone), false},
		{"caller's deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), false},
		{"injected fault", fmt.Errorf("commit: %w", store.ErrInjected), false},
		{"a bug", errors.New("cannot scan NULL"), false},
		{"nil", nil, false},
	}
	for _, c := range cases {
		if got := store.Unreachable(c.err); got != c.want {
			t.Errorf("Unreachable(%s: %v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// A statement sent while the database is cut off fails with an error
// Unreachable recognises, and the database answers again once it is back.
// PostgreSQL through a proxy the test cuts.
func TestAStatementWhileTheDatabaseIsCutOffIsUnreachable(t *testing.T) {
	t.Parallel()
	raw := storetest.PostgresURL(t)
	proxy := storetest.NewProxy(t, raw)
	db, err := store.Open(context.Background(), proxy.URL(raw))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	var one int
	if err := db.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	for i := range 3 { // a pooled connection, then new ones: all fail alike
		if err := db.QueryRow(ctx, "SELECT 1").Scan(&one); !store.Unreachable(err) {
			t.Errorf("statement %d while cut off: Unreachable(%v) = false, want true", i+1, err)
		}
	}
	time.Sleep(1500 * time.Millisecond) // the outage lasts as a short restart does
	if err := proxy.Restore(); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Errorf("once the database is back: %v", err)
	}
}

// A step that failed because the database could not be reached is tried
// again with a backoff — growing, bounded at about 2 s, jittered — for at
// least 30 s, an outage's length; any other error only 4 times in all,
// within a fifth of a second. (Regression: a 3 s restart used every retry
// within 0.1 s.)
func TestRetryWaitWaitsOutAnOutageOfThirtySecondsButNotOtherErrors(t *testing.T) {
	t.Parallel()
	down := fmt.Errorf("commit: %w", &pgconn.PgError{Code: "57P01"})
	start := time.Now()
	var total time.Duration
	waits := map[time.Duration]bool{}
	n := 1
	for ; ; n++ {
		wait, again := store.RetryWait(down, n, start.Add(-total))
		if !again {
			break
		}
		if wait <= 0 || wait > 2400*time.Millisecond {
			t.Fatalf("wait %d = %v, want in (0, 2.4s]", n, wait)
		}
		waits[wait] = true
		total += wait
	}
	if total < 30*time.Second {
		t.Errorf("an unreachable database is waited out for %v in %d attempts, want at least 30s", total, n)
	}
	if len(waits) < n/2 {
		t.Errorf("%d attempts waited only %d distinct times: no jitter", n, len(waits))
	}
	if w, _ := store.RetryWait(down, 1, start); w > 200*time.Millisecond {
		t.Errorf("first wait = %v, want a short one", w)
	}

	refused := fmt.Errorf("insert: %w", &pgconn.PgError{Code: "23505"})
	total, n = 0, 1
	for ; ; n++ {
		wait, again := store.RetryWait(refused, n, start)
		if !again {
			break
		}
		total += wait
	}
	if n != 4 || total > 250*time.Millisecond {
		t.Errorf("another error: %d attempts waiting %v in all, want 4 within 250ms", n, total)
	}
}
