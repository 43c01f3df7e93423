package typo3

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// EnvMariaDB names the variable holding the MariaDB server for tests, in the
// driver's DSN form (user:password@tcp(host:port)/); its default is the local
// server as root without a password.
const EnvMariaDB = "WAYMARK_TEST_MARIADB"

// eachDialect runs fn as subtests "mariadb" and "postgres", each on a fresh,
// empty database of its own, dropped at cleanup.
func eachDialect(t *testing.T, fn func(t *testing.T, db *sql.DB, d Dialect)) {
	t.Helper()
	t.Run("mariadb", func(t *testing.T) { fn(t, mariaDB(t), MariaDB) })
	t.Run("postgres", func(t *testing.T) { fn(t, postgresDB(t), Postgres) })
}

func randomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// unavailable skips the test, or fails it under CI, where every half must run.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format+" (CI is set: the test must run)", args...)
	}
	t.Skipf(format, args...)
}

// mariaDB returns a connection to a new database waymark_t3_<random> on the
// test server.
func mariaDB(t testing.TB) *sql.DB {
	t.Helper()
	dsn := os.Getenv(EnvMariaDB)
	if dsn == "" {
		dsn = "root@tcp(127.0.0.1:3306)/"
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("%s: %v", EnvMariaDB, err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatalf("open mariadb: %v", err)
	}
	if err := admin.Ping(); err != nil {
		admin.Close()
		unavailable(t, "MariaDB at %s is not reachable (%v): set %s or start it", cfg.Addr, err, EnvMariaDB)
	}
	name := randomName("waymark_t3_")
	if _, err := admin.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		admin.Close()
		t.Fatalf("create database: %v", err)
	}
	cfg.DBName = name
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	t.Cleanup(func() {
		db.Close()
		_, _ = admin.Exec("DROP DATABASE " + name)
		admin.Close()
	})
	return db
}

// postgresDB returns a connection whose search path is a new, empty schema
// on the server of WAYMARK_TEST_POSTGRES.
func postgresDB(t testing.TB) *sql.DB {
	t.Helper()
	base := os.Getenv("WAYMARK_TEST_POSTGRES")
	if base == "" {
		unavailable(t, "WAYMARK_TEST_POSTGRES is not set: no server for the PostgreSQL half")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	if err := admin.Ping(); err != nil {
		admin.Close()
		unavailable(t, "PostgreSQL of WAYMARK_TEST_POSTGRES is not reachable: %v", err)
	}
	schema := randomName("t3_")
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		t.Fatalf("create schema: %v", err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("WAYMARK_TEST_POSTGRES: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatalf("open schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		db.Close()
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	return db
}

// demoDB is a fresh database of dialect d with the demo site, its passwords
// hashed cheaply.
func demoDB(t *testing.T, db *sql.DB, d Dialect) {
	t.Helper()
	if err := CreateDemo(context.Background(), db, d, DemoConfig{Argon2: cheapArgon2}); err != nil {
		t.Fatalf("CreateDemo(%s) = %v", d, err)
	}
}

var cheapArgon2 = Argon2Params{Memory: 1024, Time: 1, Threads: 1}
