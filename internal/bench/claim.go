package bench

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"waymark/internal/store"
)

// markerTable marks a database the bench made: it holds the run's secret
// key, so that a later bench can reuse the database. The bench runs only on
// a database that has it or that holds no data at all, so that it never
// overwrites an installation's users, pages or configurations with its
// fixture (which it imports by uid).
const markerTable = "waymark_bench"

// dataTables are the tables whose rows are an installation's data: the
// bench refuses a database without markerTable that has a row in any.
var dataTables = []string{"be_users", "records", "configurations", "api_tokens", "skills", "runs", "conversations"}

// NotBenchDBError refuses a database the bench did not make: nothing was
// written to it.
type NotBenchDBError struct {
	Addr string // the database, without credentials
	What string // what it holds, e.g. "3 rows in be_users, 40 in records"
	// TYPO3 marks the TYPO3 database of bench --typo3, which must be empty.
	TYPO3 bool
}

func (e *NotBenchDBError) Error() string {
	if e.TYPO3 {
		return fmt.Sprintf("typo3 database %s holds %s that bench did not make; bench --typo3 creates its TYPO3 site only in an empty database, and wrote nothing", e.Addr, e.What)
	}
	return fmt.Sprintf("database %s holds %s that bench did not make; bench runs only on an empty database or one an earlier bench made, and wrote nothing", e.Addr, e.What)
}

// claim decides whether the bench may run on db and returns the secret key
// of the run: the one markerTable keeps when an earlier bench made db,
// else fileKey (--data-dir's) or a new one, kept in a new markerTable. A
// database with data and no markerTable is refused with *NotBenchDBError
// before anything is written to it.
func claim(ctx context.Context, db *store.DB, fileKey []byte) ([]byte, error) {
	tables, err := tableNames(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("bench database: %w", err)
	}
	if slices.Contains(tables, markerTable) {
		var stored string
		err := db.QueryRow(ctx, "SELECT secret_key FROM "+markerTable).Scan(&stored)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("bench database %s: %s has no key", db.Addr, markerTable)
		}
		if err != nil {
			return nil, fmt.Errorf("bench database %s: %w", db.Addr, err)
		}
		if fileKey != nil {
			return fileKey, nil
		}
		return hex.DecodeString(stored)
	}
	if len(tables) > 0 {
		if !slices.Contains(tables, "be_users") {
			return nil, &NotBenchDBError{Addr: db.Addr, What: "tables (" + strings.Join(first(tables, 5), ", ") + ")"}
		}
		var held []string
		for _, t := range dataTables {
			if !slices.Contains(tables, t) {
				continue
			}
			var n int64
			if err := db.QueryRow(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
				return nil, fmt.Errorf("bench database %s: %w", db.Addr, err)
			}
			if n > 0 {
				held = append(held, fmt.Sprintf("%d rows in %s", n, t))
			}
		}
		if len(held) > 0 {
			return nil, &NotBenchDBError{Addr: db.Addr, What: strings.Join(held, ", ")}
		}
	}
	key := fileKey
	if key == nil {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	if _, err := db.Exec(ctx, "CREATE TABLE "+markerTable+" (secret_key TEXT NOT NULL)"); err != nil {
		return nil, fmt.Errorf("bench database %s: %w", db.Addr, err)
	}
	if _, err := db.Exec(ctx, "INSERT INTO "+markerTable+" (secret_key) VALUES (?)", hex.EncodeToString(key)); err != nil {
		return nil, fmt.Errorf("bench database %s: %w", db.Addr, err)
	}
	return key, nil
}

// tableNames are the tables of db (of its current schema on PostgreSQL).
func tableNames(ctx context.Context, db *store.DB) ([]string, error) {
	q := "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
	if db.Dialect() == store.Postgres {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
	}
	names, err := store.Collect(ctx, db, store.Column[string], q)
	slices.Sort(names)
	return names, err
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}
