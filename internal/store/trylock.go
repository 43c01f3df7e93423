package store

import (
	"context"
	"fmt"
)

// WithTryLock runs fn only when it can take the installation-wide lock name
// at once, and reports whether fn ran: for work that one process of the
// installation should do at a time and that another may simply skip (a
// scheduled purge). On PostgreSQL it is a session advisory lock keyed by
// the current schema and name, taken on a connection of its own and
// released when fn returns. SQLite needs none: its write transactions are
// serialised across every process on the file, so there fn always runs.
func (db *DB) WithTryLock(ctx context.Context, name string, fn func(ctx context.Context) error) (bool, error) {
	if db.dialect != Postgres {
		return true, fn(ctx)
	}
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("lock %s on %s: %w", name, db.Addr, err)
	}
	defer conn.Close()
	const key = "hashtextextended(current_schema() || ':lock:' || $1, 0)"
	var got bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock("+key+")", name).Scan(&got); err != nil {
		return false, fmt.Errorf("lock %s on %s: %w", name, db.Addr, err)
	}
	if !got {
		return false, nil
	}
	defer func() {
		// Unlock even when ctx is cancelled; a closed session drops it anyway.
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock("+key+")", name)
	}()
	return true, fn(ctx)
}
