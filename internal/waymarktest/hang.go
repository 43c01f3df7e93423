package waymarktest

import (
	"bytes"
	"context"
	"runtime/pprof"
	"testing"
	"time"

	"waymark/internal/store"
)

// hangAfter is how long concurrent requests may take before WhileWaiting
// logs what they wait on.
const hangAfter = 20 * time.Second

// WhileWaiting runs wait (requests sent at once, say) and, should it take
// longer than 20 s, logs what this process's goroutines wait on and, on
// PostgreSQL, the server's sessions that are not idle and the locks not
// granted: the evidence a hang needs. Twice in CI (2026-12-03) concurrent
// requests on PostgreSQL hung until the client's timeout, not reproduced.
func WhileWaiting(t testing.TB, db *store.DB, wait func()) {
	t.Helper()
	logged := make(chan struct{})
	stuck := time.AfterFunc(hangAfter, func() { defer close(logged); logWaits(t, db) })
	wait()
	if !stuck.Stop() {
		<-logged
	}
}

func logWaits(t testing.TB, db *store.DB) {
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
	t.Logf("still waiting after %v; goroutines:\n%s", hangAfter, buf.String())
	if db.Dialect() != store.Postgres {
		return
	}
	// With the pool exhausted these reads wait too: the deadline bounds them.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, q := range []string{
		`SELECT pid::text, COALESCE(state, ''), COALESCE(wait_event_type, '') || ':' || COALESCE(wait_event, ''), COALESCE((now() - xact_start)::text, ''), left(query, 120)
			FROM pg_stat_activity WHERE state <> 'idle' AND pid <> pg_backend_pid()`,
		`SELECT COALESCE(pid::text, ''), locktype, mode, COALESCE(relation::regclass::text, ''), granted::text FROM pg_locks WHERE NOT granted`,
	} {
		rows, err := db.Query(ctx, q)
		if err != nil {
			t.Logf("%s: %v", q, err)
			continue
		}
		for rows.Next() {
			var a, b, c, d, e string
			if err := rows.Scan(&a, &b, &c, &d, &e); err != nil {
				t.Logf("%v", err)
				continue
			}
			t.Logf("%s | %s | %s | %s | %s", a, b, c, d, e)
		}
		if err := rows.Err(); err != nil {
			t.Logf("%s: %v", q, err)
		}
		rows.Close()
	}
}
