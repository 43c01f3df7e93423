// Package storetest gives tests a fresh, migrated database of each dialect.
//
// SQLite is a new file in the test's temp dir. PostgreSQL comes from
// WAYMARK_TEST_POSTGRES (a postgres:// URL); every test gets its own schema,
// dropped at cleanup. Without the variable the PostgreSQL half skips with a
// message — unless CI is set, then it fails.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"waymark/internal/store"
)

// EnvPostgres names the variable holding the PostgreSQL URL for tests.
const EnvPostgres = "WAYMARK_TEST_POSTGRES"

// config is the options of every test database: those of the environment
// (WAYMARK_STORE_NO_FAST_PATHS) with nesting checked, so that a write
// through the handle inside a transaction callback fails the test with
// store.ErrNestedTx on both dialects instead of hanging on SQLite.
func config() *store.Config {
	return &store.Config{NoFastPaths: os.Getenv(store.EnvNoFastPaths) == "1", CheckNesting: true}
}

// Each runs fn as subtests "sqlite" and "postgres", each on a fresh migrated database.
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, Postgres(t)) })
}

// SQLite returns a fresh migrated SQLite database in t's temp dir.
func SQLite(t testing.TB) *store.DB {
	t.Helper()
	return sqliteWith(t, config())
}

func sqliteWith(t testing.TB, cfg *store.Config) *store.DB {
	t.Helper()
	db, err := store.OpenConfig(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "test.db"), cfg)
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate sqlite: %v", err)
	}
	return db
}

// PostgresURL returns a URL for a fresh, empty schema of the test server, dropped at
// cleanup, or skips (fails under CI) when WAYMARK_TEST_POSTGRES is unset.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvPostgres)
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set but CI is: the PostgreSQL half of the store tests must run", EnvPostgres)
		}
		t.Skipf("%s not set: skipping the PostgreSQL half", EnvPostgres)
	}
	admin, err := store.Open(context.Background(), base)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", EnvPostgres, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Postgres returns a fresh migrated PostgreSQL database in its own schema.
func Postgres(t testing.TB) *store.DB {
	t.Helper()
	return postgresWith(t, config())
}

func postgresWith(t testing.TB, cfg *store.Config) *store.DB {
	t.Helper()
	db, err := store.OpenConfig(context.Background(), PostgresURL(t), cfg)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate postgres: %v", err)
	}
	return db
}

// Open returns a fresh migrated database of the named dialect ("sqlite" or "postgres").
func Open(t testing.TB, dialect store.Dialect) *store.DB {
	t.Helper()
	switch dialect {
	case store.SQLite:
		return SQLite(t)
	case store.Postgres:
		return Postgres(t)
	}
	panic(fmt.Sprintf("storetest: unknown dialect %q", dialect))
}

// OpenWith is Open with the options of every test database changed by edit
// (a store.Fault, say).
func OpenWith(t testing.TB, dialect store.Dialect, edit func(*store.Config)) *store.DB {
	t.Helper()
	cfg := config()
	edit(cfg)
	switch dialect {
	case store.SQLite:
		return sqliteWith(t, cfg)
	case store.Postgres:
		return postgresWith(t, cfg)
	}
	panic(fmt.Sprintf("storetest: unknown dialect %q", dialect))
}

// EachShared runs fn as subtests "sqlite" and "postgres", each with a fresh
// migrated database and a function that opens another handle on it (closed
// at cleanup): what a second process sees.
func EachShared(t *testing.T, fn func(t *testing.T, db *store.DB, another func() *store.DB)) {
	t.Helper()
	run := func(t *testing.T, raw string) {
		open := func() *store.DB {
			db, err := store.Open(context.Background(), raw)
			if err != nil {
				t.Fatalf("open %s: %v", raw, err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}
		db := open()
		if err := db.Migrate(context.Background()); err != nil {
			t.Fatalf("migrate: %v", err)
		}
		fn(t, db, open)
	}
	t.Run("sqlite", func(t *testing.T) { run(t, "sqlite:"+filepath.Join(t.TempDir(), "test.db")) })
	t.Run("postgres", func(t *testing.T) { run(t, PostgresURL(t)) })
}
