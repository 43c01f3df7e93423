package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strconv"
	"strings"
)

// ErrNotSQLite is returned by Snapshot on a PostgreSQL database, whose
// consistent copy is pg_dump's to make.
var ErrNotSQLite = errors.New("not a SQLite database")

// Snapshot writes a consistent copy of a SQLite database to path, a file
// that must not exist, with VACUUM INTO: one read transaction, so the copy
// is the database at one moment while other connections keep writing, and
// compact (no free pages, no write-ahead log of its own).
func (db *DB) Snapshot(ctx context.Context, path string) error {
	if db.dialect != SQLite {
		return ErrNotSQLite
	}
	if _, err := db.SQL.ExecContext(ctx, "VACUUM INTO ?", path); err != nil {
		return fmt.Errorf("copy %s: %w", db.Addr, err)
	}
	return nil
}

// SQLiteFileVersion opens the SQLite file at path read-only and returns its
// schema version (0 for a file without migrations) and the result of
// PRAGMA quick_check ("ok" for a sound file). It writes nothing.
func SQLiteFileVersion(ctx context.Context, path string) (version int64, check string, err error) {
	q := url.Values{}
	q.Set("mode", "ro")
	sqldb, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return 0, "", err
	}
	defer sqldb.Close()
	if err := sqldb.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&check); err != nil {
		return 0, "", fmt.Errorf("check %s: %w", path, err)
	}
	var tables int
	if err := sqldb.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'goose_db_version'").Scan(&tables); err != nil {
		return 0, check, fmt.Errorf("read %s: %w", path, err)
	}
	if tables == 0 {
		return 0, check, nil
	}
	if err := sqldb.QueryRowContext(ctx, "SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied").Scan(&version); err != nil {
		return 0, check, fmt.Errorf("read schema version of %s: %w", path, err)
	}
	return version, check, nil
}

// NewestVersion is the newest schema version this binary's migrations of
// dialect d bring a database to.
func NewestVersion(d Dialect) (int64, error) {
	entries, err := fs.ReadDir(migrations, "migrations/"+string(d))
	if err != nil {
		return 0, err
	}
	var newest int64
	for _, e := range entries {
		v, _, _ := strings.Cut(e.Name(), "_")
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			newest = max(newest, n)
		}
	}
	return newest, nil
}
