package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Dialect names the SQL dialect of an open database.
type Dialect string

// The two supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DefaultURL is the database used when neither --db nor WAYMARK_DB is set.
const DefaultURL = "sqlite:waymark.db"

// connectTimeout bounds how long Open waits for an unreachable database.
const connectTimeout = 8 * time.Second

//go:embed migrations
var migrations embed.FS

// DB is an open database of one dialect.
type DB struct {
	SQL     *sql.DB
	dialect Dialect
	// Addr names the database for messages (a file path or host:port/db), never a password.
	Addr string
}

// ErrBadURL is returned by Open and ParseURL when a --db value does not parse.
var ErrBadURL = errors.New("bad database URL")

// Target is a parsed --db value.
type Target struct {
	Dialect Dialect
	DSN     string // driver data source name
	Addr    string // for messages
}

// ParseURL parses a --db value: "sqlite:PATH" or "postgres://…"/"postgresql://…".
func ParseURL(raw string) (Target, error) {
	raw = strings.TrimSpace(raw)
	switch {
	case strings.HasPrefix(raw, "sqlite:"):
		path := strings.TrimPrefix(raw, "sqlite:")
		path = strings.TrimPrefix(path, "//")
		if path == "" {
			return Target{}, fmt.Errorf("%w %q: sqlite needs a file path (sqlite:PATH)", ErrBadURL, raw)
		}
		q := url.Values{}
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "foreign_keys(1)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Set("_txlock", "immediate")
		return Target{Dialect: SQLite, DSN: "file:" + path + "?" + q.Encode(), Addr: path}, nil
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		u, err := url.Parse(raw)
		if err != nil {
			return Target{}, fmt.Errorf("%w: %s", ErrBadURL, redactErr(err))
		}
		if u.Host == "" {
			return Target{}, fmt.Errorf("%w %q: postgres URL needs a host", ErrBadURL, u.Redacted())
		}
		return Target{Dialect: Postgres, DSN: raw, Addr: u.Host + u.Path}, nil
	default:
		return Target{}, fmt.Errorf("%w %q: want sqlite:PATH or postgres://…", ErrBadURL, raw)
	}
}

// redactErr keeps url.Parse errors from echoing a password.
func redactErr(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// Open parses raw, connects and pings within a bounded time. It does not migrate.
func Open(ctx context.Context, raw string) (*DB, error) {
	t, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	driver := "sqlite"
	if t.Dialect == Postgres {
		driver = "pgx"
	}
	sqldb, err := sql.Open(driver, t.DSN)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", t.Addr, err)
	}
	if t.Dialect == SQLite {
		// One writer at a time is SQLite's rule; a few connections let WAL readers proceed.
		sqldb.SetMaxOpenConns(4)
	} else {
		sqldb.SetMaxOpenConns(16)
	}
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	if err := sqldb.PingContext(pctx); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("cannot reach database %s: %w", t.Addr, err)
	}
	return &DB{SQL: sqldb, dialect: t.Dialect, Addr: t.Addr}, nil
}

// Close closes the pool.
func (db *DB) Close() error { return db.SQL.Close() }

// Dialect reports the dialect.
func (db *DB) Dialect() Dialect { return db.dialect }

func (db *DB) migrationFS() (fs.FS, error) {
	return fs.Sub(migrations, "migrations/"+string(db.dialect))
}

func (db *DB) provider() (*goose.Provider, error) {
	fsys, err := db.migrationFS()
	if err != nil {
		return nil, err
	}
	gd := goose.DialectSQLite3
	if db.dialect == Postgres {
		gd = goose.DialectPostgres
	}
	return goose.NewProvider(gd, db.SQL, fsys)
}

// Migrate applies every embedded migration not yet applied.
func (db *DB) Migrate(ctx context.Context) error {
	p, err := db.provider()
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate %s: %w", db.Addr, err)
	}
	return nil
}

// MigrationsCurrent reports whether every embedded migration is applied (for /readyz).
func (db *DB) MigrationsCurrent(ctx context.Context) (bool, error) {
	p, err := db.provider()
	if err != nil {
		return false, err
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return false, err
	}
	return !pending, nil
}

// Rebind turns "?" placeholders into "$1…$n" for PostgreSQL. A "?" inside a
// single-quoted literal is left alone.
func Rebind(d Dialect, q string) string {
	if d != Postgres || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n, inQuote := 0, false
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'':
			inQuote = !inQuote
			b.WriteByte(c)
		case c == '?' && !inQuote:
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Querier is what DB and Tx share: queries with "?" placeholders.
type Querier interface {
	Exec(ctx context.Context, q string, args ...any) (sql.Result, error)
	Query(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRow(ctx context.Context, q string, args ...any) *sql.Row
	Dialect() Dialect
}

var (
	_ Querier = (*DB)(nil)
	_ Querier = (*Tx)(nil)
)

// Exec runs a statement.
func (db *DB) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return db.SQL.ExecContext(ctx, Rebind(db.dialect, q), args...)
}

// Query runs a query.
func (db *DB) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return db.SQL.QueryContext(ctx, Rebind(db.dialect, q), args...)
}

// QueryRow runs a query expected to return at most one row.
func (db *DB) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return db.SQL.QueryRowContext(ctx, Rebind(db.dialect, q), args...)
}

// Tx is a transaction of one dialect.
type Tx struct {
	SQL     *sql.Tx
	dialect Dialect
}

// Dialect reports the dialect.
func (tx *Tx) Dialect() Dialect { return tx.dialect }

// Exec runs a statement.
func (tx *Tx) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return tx.SQL.ExecContext(ctx, Rebind(tx.dialect, q), args...)
}

// Query runs a query.
func (tx *Tx) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return tx.SQL.QueryContext(ctx, Rebind(tx.dialect, q), args...)
}

// QueryRow runs a query expected to return at most one row.
func (tx *Tx) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return tx.SQL.QueryRowContext(ctx, Rebind(tx.dialect, q), args...)
}

// Begin starts a transaction.
func (db *DB) Begin(ctx context.Context) (*Tx, error) {
	t, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &Tx{SQL: t, dialect: db.dialect}, nil
}

// InTx runs fn in a transaction and commits when fn returns nil. A failed
// commit is reported as ErrCommitUnknown wrapped around the driver's error:
// the caller must not guess whether it landed.
func (db *DB) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.SQL.Rollback()
		return err
	}
	if err := tx.SQL.Commit(); err != nil {
		return fmt.Errorf("%w: %w", ErrCommitUnknown, err)
	}
	return nil
}

// ErrCommitUnknown wraps a failed commit: the state of the transaction is unknown.
var ErrCommitUnknown = errors.New("commit failed, state unknown")

// Micros converts a time to the stored representation (unix microseconds).
func Micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// Time converts stored unix microseconds back; 0 is the zero time.
func Time(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}
