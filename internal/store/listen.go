package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNoListener is returned by ListenPool on SQLite, which has no LISTEN.
var ErrNoListener = errors.New("store: LISTEN/NOTIFY needs PostgreSQL")

// ListenPool returns a small pgx pool on the same PostgreSQL database and
// schema as SQL, opened on first use and closed with the DB. The job queue
// takes its LISTEN connections from it (River's pgx listener), so workers
// wake on an insert instead of polling.
func (db *DB) ListenPool(ctx context.Context) (*pgxpool.Pool, error) {
	if db.dialect != Postgres {
		return nil, ErrNoListener
	}
	db.queueMu.Lock()
	defer db.queueMu.Unlock()
	if db.listen != nil {
		return db.listen, nil
	}
	cfg, err := pgxpool.ParseConfig(db.dsn)
	if err != nil {
		return nil, fmt.Errorf("listener pool: %w", err)
	}
	cfg.MinConns, cfg.MaxConns = 0, 3 // River's listener, the signals' (Watch) and one to spare
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("listener pool for %s: %w", db.Addr, err)
	}
	db.listen = p
	return p, nil
}
