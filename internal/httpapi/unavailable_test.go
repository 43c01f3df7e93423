package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"waymark/internal/httpapi"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// A handler error that says the database could not be reached — a refused
// connection, a server shutting down — answers 503 database_unavailable
// with Retry-After, which a client may wait out; an error of the database
// that answered (a constraint, a bad statement) stays 500 internal, and so
// does a pool the process closed (it is shutting down). Before, every one
// of them was 500 internal.
func TestAnErrorOfAnUnreachableDatabaseAnswers503WithRetryAfterNot500(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		cases := []struct {
			path   string
			err    error
			status int
			code   string
		}{
			{"/test/refused", fmt.Errorf("read conversation 3: %w", refused), http.StatusServiceUnavailable, "database_unavailable"},
			{"/test/shutdown", fmt.Errorf("commit: %w", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}), http.StatusServiceUnavailable, "database_unavailable"},
			{"/test/constraint", fmt.Errorf("insert: %w", &pgconn.PgError{Code: "23505", Message: "duplicate key"}), http.StatusInternalServerError, "internal"},
			{"/test/bug", errors.New("cannot scan NULL into int64"), http.StatusInternalServerError, "internal"},
		}
		for _, c := range cases {
			b.srv.Handle("GET "+c.path, func(w http.ResponseWriter, r *http.Request) error { return c.err })
		}
		for _, c := range cases {
			a := b.do(t, call{method: "GET", path: c.path, token: erikaToken})
			wantError(t, c.path, a, c.status, c.code)
			if got := a.header.Get("Retry-After"); (c.status == http.StatusServiceUnavailable) != (got != "") {
				t.Errorf("GET %s: Retry-After = %q, want one exactly on a 503", c.path, got)
			}
		}
		if httpapi.StatusOf(store.ErrUnavailable.Kind()) != http.StatusServiceUnavailable {
			t.Errorf("database_unavailable is not a 503 kind")
		}
	})
}

// A request while the database does not answer at all — the server cut
// off, as during its restart — is 503 database_unavailable with
// Retry-After, and the same request once it is back answers as before.
// PostgreSQL through a proxy the test cuts (SQLite has no outage).
func TestARequestWhileTheDatabaseDoesNotAnswerIs503DatabaseUnavailable(t *testing.T) {
	t.Parallel()
	raw := storetest.PostgresURL(t)
	proxy := storetest.NewProxy(t, raw)
	db, err := store.Open(context.Background(), proxy.URL(raw))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := setup(t, db)
	if a := b.do(t, call{method: "GET", path: "/api/me", token: erikaToken}); a.status != http.StatusOK {
		t.Fatalf("GET /api/me before the outage = %d %s", a.status, a.body)
	}
	proxy.Cut()
	a := b.do(t, call{method: "GET", path: "/api/me", token: erikaToken})
	wantError(t, "GET /api/me while the database does not answer", a, http.StatusServiceUnavailable, "database_unavailable")
	if a.header.Get("Retry-After") == "" {
		t.Errorf("503 without Retry-After")
	}
	// The outage lasts as a short restart does: a pooled connection idle
	// for more than a second is checked before it is used again.
	time.Sleep(1500 * time.Millisecond)
	if err := proxy.Restore(); err != nil {
		t.Fatal(err)
	}
	if a := b.do(t, call{method: "GET", path: "/api/me", token: erikaToken}); a.status != http.StatusOK {
		t.Errorf("GET /api/me once the database is back = %d %s, want 200; log:\n%s", a.status, a.body, b.logs.String())
	}
}
