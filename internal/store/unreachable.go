package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"waymark/internal/fault"
)

// ErrUnavailable is the answer to a request that found the database not
// answering (503 database_unavailable, with Retry-After): the request can be
// sent again in a moment. Whether a write it carried landed is unknown to
// the server too, so a client reads before it repeats one.
var ErrUnavailable = fault.New(fault.Unavailable, "database_unavailable",
	"the database does not answer; try again in a moment")

// Unreachable reports whether err says the database could not be reached
// or dropped the connection: a refused or reset connection, a connection
// closed mid-statement, a server that is shutting down or starting
// (SQLSTATE class 08, 57P01–57P03). Any other error — a refusal of a
// statement, a constraint, a timeout or cancellation of the caller's
// context, an injected fault, a pool this process closed — is not: only
// an unreachable database is worth waiting for.
func Unreachable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, sql.ErrConnDone) || errors.Is(err, ErrInjected) {
		return false
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch code := pg.Code; {
		case len(code) == 5 && code[:2] == "08":
			return true
		case code == "57P01", code == "57P02", code == "57P03": // admin shutdown, crash shutdown, cannot connect now
			return true
		}
		return false
	}
	var connect *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connect) || errors.As(err, &netErr) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, pgconn.ErrConnClosed)
}

// OutageWindow is how long a step that failed because the database could
// not be reached is tried again (RetryWait) before it is given up: longer
// than a restart of the database server or a failover, 30 s and more.
const OutageWindow = 45 * time.Second

// retryAttempts bounds the retries of a step that failed for another
// reason than an unreachable database: a few, quickly.
const retryAttempts = 4

// RetryWait decides the retry of a step (a commit a worker must make, a
// decision it carries out) whose n-th attempt (n from 1) failed with err,
// first tried at since: whether to try again, and after how long. An
// unreachable database (Unreachable) is waited out with a backoff —
// 100 ms doubling to at most 2 s, each wait jittered by ±20 % so the
// workers do not come back all at once — for OutageWindow; any other error
// is tried again retryAttempts times in all, after 10, 40 and 160 ms.
func RetryWait(err error, n int, since time.Time) (time.Duration, bool) {
	if Unreachable(err) {
		if time.Since(since) >= OutageWindow {
			return 0, false
		}
		d := min(100*time.Millisecond<<min(n-1, 5), 2*time.Second)
		return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64())), true
	}
	if n >= retryAttempts {
		return 0, false
	}
	return time.Duration(10<<(2*(n-1))) * time.Millisecond, true
}

// Retry runs step until it succeeds, final says its error is not to be
// retried, ctx ends, or RetryWait gives up, and returns step's last error.
// Before each wait it calls onRetry with the attempt, the wait and the
// error (a log line).
func Retry(ctx context.Context, step func() error, final func(error) bool, onRetry func(n int, wait time.Duration, err error)) error {
	since := time.Now()
	for n := 1; ; n++ {
		err := step()
		if err == nil || final(err) || ctx.Err() != nil {
			return err
		}
		wait, again := RetryWait(err, n, since)
		if !again {
			return err
		}
		onRetry(n, wait, err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
}
