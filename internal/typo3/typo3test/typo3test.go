// Package typo3test gives tests outside package typo3 a TYPO3 database of
// their own on MariaDB (WAYMARK_TEST_MARIADB, default root on 127.0.0.1:3306)
// and PostgreSQL (WAYMARK_TEST_POSTGRES), dropped when the test ends. A
// server that is not reachable skips its half, or fails it when CI is set.
package typo3test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"

	"waymark/internal/typo3"
)

// DB is one test's TYPO3 database.
type DB struct {
	*sql.DB
	Dialect typo3.Dialect
	// Addr is the server's host:port.
	Addr string
	// URL is the database in typo3.Open's form (mysql://… or postgres://…).
	URL string
	// Via opens the same database through another host:port (a Proxy).
	Via func(addr string) *sql.DB
}

// Each runs fn as subtests "mariadb" and "postgres", each on a fresh TYPO3
// demo database (typo3.CreateDemo with cheap password hashes).
func Each(t *testing.T, fn func(t *testing.T, db DB)) {
	t.Helper()
	t.Run("mariadb", func(t *testing.T) { fn(t, Demo(t, MariaDB(t))) })
	t.Run("postgres", func(t *testing.T) { fn(t, Demo(t, Postgres(t))) })
}

// Demo fills db with the demo site and returns it.
func Demo(t testing.TB, db DB) DB {
	t.Helper()
	err := typo3.CreateDemo(context.Background(), db.DB, db.Dialect,
		typo3.DemoConfig{Argon2: typo3.Argon2Params{Memory: 1024, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatalf("CreateDemo(%s) = %v", db.Dialect, err)
	}
	return db
}

func randomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format+" (CI is set: the test must run)", args...)
	}
	t.Skipf(format, args...)
}

// MariaDB returns a new, empty database waymark_t3_<random>.
func MariaDB(t testing.TB) DB {
	t.Helper()
	dsn := os.Getenv("WAYMARK_TEST_MARIADB")
	if dsn == "" {
		dsn = "root@tcp(127.0.0.1:3306)/"
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("WAYMARK_TEST_MARIADB: %v", err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatalf("open mariadb: %v", err)
	}
	if err := admin.Ping(); err != nil {
		admin.Close()
		unavailable(t, "MariaDB at %s is not reachable (%v): set WAYMARK_TEST_MARIADB or start it", cfg.Addr, err)
	}
	name := randomName("waymark_t3_")
	if _, err := admin.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		admin.Close()
		t.Fatalf("create database: %v", err)
	}
	cfg.DBName = name
	var opened []*sql.DB
	via := func(addr string) *sql.DB {
		c := cfg.Clone()
		c.Addr = addr
		db, err := sql.Open("mysql", c.FormatDSN())
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		opened = append(opened, db)
		return db
	}
	db := via(cfg.Addr)
	t.Cleanup(func() {
		for _, d := range opened {
			d.Close()
		}
		_, _ = admin.Exec("DROP DATABASE " + name)
		admin.Close()
	})
	mu := url.URL{Scheme: "mysql", Host: cfg.Addr, Path: "/" + name}
	if cfg.User != "" {
		mu.User = url.UserPassword(cfg.User, cfg.Passwd)
		if cfg.Passwd == "" {
			mu.User = url.User(cfg.User)
		}
	}
	return DB{DB: db, Dialect: typo3.MariaDB, Addr: cfg.Addr, URL: mu.String(), Via: via}
}

// Postgres returns a connection whose search path is a new, empty schema.
func Postgres(t testing.TB) DB {
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
	var opened []*sql.DB
	via := func(addr string) *sql.DB {
		v := *u
		v.Host = addr
		db, err := sql.Open("pgx", v.String())
		if err != nil {
			t.Fatalf("open schema %s: %v", schema, err)
		}
		opened = append(opened, db)
		return db
	}
	db := via(u.Host)
	t.Cleanup(func() {
		for _, d := range opened {
			d.Close()
		}
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	return DB{DB: db, Dialect: typo3.Postgres, Addr: u.Host, URL: u.String(), Via: via}
}

// Proxy forwards TCP connections to a database server until Stop: then it
// refuses new connections and cuts the open ones, as a server that went
// away does.
type Proxy struct {
	Addr string
	ln   net.Listener
	mu   sync.Mutex
	cons []net.Conn
	done bool
}

// NewProxy listens on a free local port and forwards to target.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			if !p.track(c, s) {
				return
			}
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
	t.Cleanup(p.Stop)
	return p
}

func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	p.cons = append(p.cons, cs...)
	return true
}

// Stop closes the listener and every forwarded connection.
func (p *Proxy) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	p.ln.Close()
	for _, c := range p.cons {
		c.Close()
	}
}
