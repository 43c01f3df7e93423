package store

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
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

	commits atomic.Int64 // transactions committed through InTx and Exec outside one
	queries atomic.Int64 // statements run through DB and Tx methods

	// writeMu serialises this process's SQLite writes (see InTx), the job
	// queue's included (QueuePool); nil on PostgreSQL.
	writeMu *writeLock
	// holders are the goroutines inside an InTx callback, when nesting is
	// checked (Config.CheckNesting) on PostgreSQL; SQLite's are writeMu's.
	holders *holderSet
	fast    bool    // the fast paths are on (Config.NoFastPaths unset; doc.go)
	queue   *sql.DB // the job queue's pool (QueuePool), opened on first use
	// writer, on SQLite with the fast paths, is the one connection InTx and
	// Exec write through. Its own: a writer holds writeMu while it waits for
	// a connection, and in the shared pool it waited behind every reader —
	// with 500 conversations polling, behind hundreds of them, while every
	// other writer waited on writeMu (the bench's stall).
	writer  *sql.DB
	dsn     string
	queueMu sync.Mutex    // guards queue and listen
	listen  *pgxpool.Pool // PostgreSQL: the queue's LISTEN pool (ListenPool), opened on first use

	ckpt *checkpointer // SQLite: background checkpoints (checkpoint.go); nil on PostgreSQL

	fault *Fault // Config.Fault: nil in production

	caches sync.Map // *GenCache → its slot for this database (see GenCache)
	// movers: on SQLite, the tables whose writes may move the settings
	// generation, read from the schema at the first write (genneutral.go).
	movers atomic.Pointer[genMovers]

	signals signals // Watch and Signal: in-process wake-ups by key

	stmtMu sync.Mutex           // guards stmts and wanted
	stmts  map[string]*sql.Stmt // prepared statements by (rebound) query text
	wanted map[string]bool      // queries a transaction ran unprepared, to prepare later
}

// Commits reports how many commits this pool made through InTx and Exec (for
// benchmarks that count commits per operation).
func (db *DB) Commits() int64 { return db.commits.Load() }

// Statements reports how many statements ran through DB and Tx methods.
func (db *DB) Statements() int64 { return db.queries.Load() }

// maxStmts bounds the statement cache; queries beyond it run unprepared.
const maxStmts = 1024

// stmt returns the cached prepared statement of q, preparing it on the pool
// when missing. Only callers that hold no connection may prepare (a
// transaction that prepared on the pool could wait for a connection held by
// another transaction waiting on it); transactions use cached instead.
func (db *DB) stmt(ctx context.Context, q string) *sql.Stmt {
	db.queries.Add(1)
	if !db.fast {
		return nil
	}
	if st := db.lookup(q); st != nil {
		return st
	}
	db.prepare(ctx, q)
	return db.lookup(q)
}

// cached returns q's statement if it is prepared, and otherwise notes q so
// the next call that holds no connection prepares it.
func (db *DB) cached(q string) *sql.Stmt {
	db.queries.Add(1)
	if !db.fast {
		return nil
	}
	db.stmtMu.Lock()
	defer db.stmtMu.Unlock()
	if st, ok := db.stmts[q]; ok {
		return st
	}
	if len(db.wanted) < maxStmts {
		if db.wanted == nil {
			db.wanted = map[string]bool{}
		}
		db.wanted[q] = true
	}
	return nil
}

func (db *DB) lookup(q string) *sql.Stmt {
	db.stmtMu.Lock()
	defer db.stmtMu.Unlock()
	return db.stmts[q]
}

// prepare prepares the given queries and every wanted one, without holding the lock while preparing.
func (db *DB) prepare(ctx context.Context, qs ...string) {
	db.stmtMu.Lock()
	for q := range db.wanted {
		qs = append(qs, q)
	}
	db.wanted = nil
	full := len(db.stmts) >= maxStmts
	db.stmtMu.Unlock()
	if full {
		return
	}
	for _, q := range qs {
		if db.lookup(q) != nil {
			continue
		}
		st, err := db.SQL.PrepareContext(context.WithoutCancel(ctx), q)
		if err != nil {
			continue // the query runs unprepared and reports its own error
		}
		db.stmtMu.Lock()
		_, dup := db.stmts[q]
		kept := !dup && len(db.stmts) < maxStmts
		if kept {
			if db.stmts == nil {
				db.stmts = map[string]*sql.Stmt{}
			}
			db.stmts[q] = st
		}
		db.stmtMu.Unlock()
		if !kept {
			// Closed outside stmtMu: Close waits for every connection the
			// statement was prepared on, and a transaction on one of them
			// may be waiting in the database for a lock whose holder waits
			// for stmtMu (cached) — a deadlock across Go and PostgreSQL.
			st.Close()
		}
	}
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
		// A page cache of up to 8 MB per connection instead of SQLite's 2 MB:
		// a read that walks many rows (a campaign's 1,000 waiting tours with
		// their runs, one page each) no longer evicts its own pages and reads
		// them again with a system call each (a review-list page 25–31 ms →
		// 21–25 ms). A memory map of the file did as much for such reads but
		// made the approval cycle a third slower.
		q.Add("_pragma", "cache_size(-8192)")
		// The writers' own checkpoint at 4,000 pages instead of 1,000: the
		// background checkpointer (checkpoint.go) copies the log back long
		// before, so a writer that crosses the threshold finds little left;
		// the WAL grows to about 16 MB before the log restarts.
		q.Add("_pragma", "wal_autocheckpoint(4000)")
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

// EnvNoFastPaths names the variable that turns every fast path off when it
// is "1" (Config.NoFastPaths; doc.go, "Fast paths"): waymark's
// --store-no-fast-paths, and storetest's databases, with which CI runs the
// store, agent and chat suites once.
const EnvNoFastPaths = "WAYMARK_STORE_NO_FAST_PATHS"

// Config holds the options of an open database. The zero value is the default.
type Config struct {
	// NoFastPaths turns off every fast path of doc.go: each statement runs
	// unprepared, InTx uses a database/sql transaction, ReadScope does
	// nothing, GenCache loads every time, and SQLite gets no background
	// checkpointer. The answers must be the same; only speed differs.
	NoFastPaths bool
	// CheckNesting records which goroutines are inside an InTx callback, so
	// that a write through the DB handle there fails with ErrNestedTx on both
	// dialects instead of deadlocking on SQLite. It costs a stack read per
	// transaction; tests turn it on (storetest), production leaves it off.
	CheckNesting bool
	// Fault, when set, fails the database call it is armed for (tests of
	// ; see Fault). Production leaves it nil.
	Fault *Fault
}

// Open parses raw, connects and pings within a bounded time, with the
// default options. It does not migrate.
func Open(ctx context.Context, raw string) (*DB, error) {
	return OpenConfig(ctx, raw, nil)
}

// OpenConfig is Open with the options of cfg (nil: the defaults).
func OpenConfig(ctx context.Context, raw string, cfg *Config) (*DB, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	t, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	var sqldb *sql.DB
	if t.Dialect == Postgres {
		if sqldb, err = sql.Open("pgx", t.DSN); err != nil {
			return nil, fmt.Errorf("open %s: %w", t.Addr, err)
		}
	} else {
		if dir := filepath.Dir(t.Addr); !strings.HasPrefix(t.Addr, ":memory:") && !strings.HasPrefix(t.Addr, "file:") {
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return nil, fmt.Errorf("open %s: the folder %s does not exist; create it first", t.Addr, dir)
			}
		}
		createPrivate(t.Addr)
		sqldb = sql.OpenDB(&serialConnector{dsn: t.DSN, noKeep: c.NoFastPaths}) // keeps statements of unprepared queries
	}
	conns := 16
	if t.Dialect == SQLite {
		// One writer at a time is SQLite's rule; a few connections let WAL readers proceed.
		conns = 4
	}
	// Idle connections are kept up to the limit: a SQLite connection is
	// expensive to open (pragmas, schema), a PostgreSQL one more so, and
	// database/sql would otherwise close all but two after each burst.
	sqldb.SetMaxOpenConns(conns)
	sqldb.SetMaxIdleConns(conns)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	if err := sqldb.PingContext(pctx); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("cannot reach database %s: %w", t.Addr, err)
	}
	db := &DB{SQL: sqldb, dialect: t.Dialect, Addr: t.Addr, dsn: t.DSN, fast: !c.NoFastPaths, fault: c.Fault}
	if t.Dialect == SQLite {
		db.writeMu = writeLockOf(t.Addr)
		if db.fast {
			db.ckpt = startCheckpointer(t.DSN)
			db.writer = sql.OpenDB(&serialConnector{dsn: t.DSN}) // writeMu is taken before its connection
			db.writer.SetMaxOpenConns(1)
			db.writer.SetMaxIdleConns(1)
			db.writer.SetConnMaxIdleTime(5 * time.Minute)
		}
		if c.CheckNesting {
			db.writeMu.checked.Store(true)
		}
	} else if c.CheckNesting {
		db.holders = &holderSet{}
	}
	return db, nil
}

// createPrivate creates a missing SQLite file with mode 0600 before SQLite
// does (with 0644 less the umask): the database holds password hashes and
// sealed keys, and SQLite gives its -wal and -shm files the mode of the
// database file. An existing file is left as it is;
// failures are left to SQLite to report.
func createPrivate(path string) {
	if path == "" || strings.HasPrefix(path, ":memory:") || strings.HasPrefix(path, "file:") {
		return
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		f.Close()
	}
}

// QueuePool returns the pool for the job queue. On PostgreSQL it is SQL. On
// SQLite it is a pool of its own whose write transactions and writes take
// the same Go mutex as InTx (serialConnector), so the queue's writers and
// this process's wait for each other in Go instead of in SQLite's busy
// handler; its own pool, because its writers hold a connection while they
// wait, and must not take the connections InTx's callbacks read with.
func (db *DB) QueuePool() *sql.DB {
	if db.writeMu == nil {
		return db.SQL
	}
	db.queueMu.Lock()
	defer db.queueMu.Unlock()
	if db.queue == nil {
		db.queue = sql.OpenDB(&serialConnector{dsn: db.dsn, mu: db.writeMu, ckpt: db.ckpt, noKeep: !db.fast})
		db.queue.SetMaxOpenConns(4)
		db.queue.SetMaxIdleConns(4)
		db.queue.SetConnMaxIdleTime(5 * time.Minute)
	}
	return db.queue
}

// Close closes the prepared statements and the pools.
func (db *DB) Close() error {
	db.ckpt.close()
	db.stopListener()
	db.stmtMu.Lock()
	stmts := db.stmts
	db.stmts = nil
	db.stmtMu.Unlock()
	for _, st := range stmts { // outside stmtMu, as in prepare
		st.Close()
	}
	db.queueMu.Lock()
	defer db.queueMu.Unlock()
	if db.queue != nil {
		db.queue.Close()
	}
	if db.listen != nil {
		db.listen.Close()
	}
	if db.writer != nil {
		db.writer.Close()
	}
	return db.SQL.Close()
}

// Dialect reports the dialect.
func (db *DB) Dialect() Dialect { return db.dialect }

// FastPaths reports whether the fast paths of doc.go are on (Config.NoFastPaths).
func (db *DB) FastPaths() bool { return db.fast }

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

// ErrSchemaNewer is returned by Migrate when the database carries a
// migration this binary does not know: a newer waymark migrated it, and
// this one must not run on it.
var ErrSchemaNewer = errors.New("is newer than this waymark knows")

// Migrate applies every embedded migration not yet applied, under the
// installation's migration lock (see WithMigrationLock), and refuses a
// database whose schema is newer than the embedded migrations.
func (db *DB) Migrate(ctx context.Context) error {
	defer db.forgetMovers() // the schema's triggers may have changed
	p, err := db.provider()
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	return db.WithMigrationLock(ctx, func(ctx context.Context) error {
		if err := db.checkNotNewer(ctx, p); err != nil {
			return err
		}
		if _, err := p.Up(ctx); err != nil {
			return fmt.Errorf("migrate %s: %w", db.Addr, err)
		}
		return nil
	})
}

// checkNotNewer fails with ErrSchemaNewer when the database's version is
// beyond the last embedded migration.
func (db *DB) checkNotNewer(ctx context.Context, p *goose.Provider) error {
	srcs := p.ListSources()
	if len(srcs) == 0 {
		return nil
	}
	known := srcs[len(srcs)-1].Version
	have, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("migrate %s: read schema version: %w", db.Addr, err)
	}
	if have > known {
		return fmt.Errorf("database %s: schema version %d %w (%d); upgrade waymark", db.Addr, have, ErrSchemaNewer, known)
	}
	return nil
}

// WithMigrationLock runs fn while holding the installation's migration
// lock: on PostgreSQL a session advisory lock keyed by the current schema,
// taken on a connection of its own and released when fn returns, so that
// several processes starting at once migrate one after the other instead
// of racing on the same DDL. SQLite needs none: its migrations run in
// write transactions, which SQLite already serialises.
func (db *DB) WithMigrationLock(ctx context.Context, fn func(ctx context.Context) error) error {
	if db.dialect != Postgres {
		return fn(ctx)
	}
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migration lock on %s: %w", db.Addr, err)
	}
	defer conn.Close()
	const lockQ = "SELECT pg_advisory_lock(" + migrationLockClass + ", hashtext(current_schema()))"
	if _, err := conn.ExecContext(ctx, lockQ); err != nil {
		return fmt.Errorf("migration lock on %s: %w", db.Addr, err)
	}
	defer func() {
		// Unlock even when ctx is cancelled; a closed session drops it anyway.
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock("+migrationLockClass+", hashtext(current_schema()))")
	}()
	return fn(ctx)
}

// migrationLockClass is the first key of the migration advisory lock
// ("wm" in ASCII), the second being the schema's hash.
const migrationLockClass = "30573"

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
	// Pool is the database the queries run on (for caches keyed by database).
	Pool() *DB
}

// Pool returns db itself.
func (db *DB) Pool() *DB { return db }

// Pool returns the database the transaction runs on.
func (tx *Tx) Pool() *DB { return tx.db }

var (
	_ Querier = (*DB)(nil)
	_ Querier = (*Tx)(nil)
)

// Exec runs a statement.
//
// On SQLite an Exec is a transaction of its own: it queues on the same Go
// mutex as InTx, so this process's writers never meet in SQLite's busy
// handler. Never call it inside an InTx callback (use the Tx): with nesting
// checked (Config.CheckNesting) that is ErrNestedTx, otherwise a deadlock on
// SQLite. Under a read scope (ReadScope) it ends the scope's snapshot: the
// scope's later reads see the write.
func (db *DB) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if err := db.fault.hit("exec", q); err != nil {
		return nil, err
	}
	unlock, err := db.lockWrite()
	if err != nil {
		return nil, err
	}
	defer unlock()
	db.scopeWrote(ctx)
	defer db.scopeWrote(ctx)
	db.schemaChange(q)
	db.commits.Add(1)
	db.ckpt.committed()
	q = Rebind(db.dialect, q)
	if db.writer != nil {
		return db.writer.ExecContext(ctx, q, args...) // its connection keeps the statement
	}
	if st := db.stmt(ctx, q); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return db.SQL.ExecContext(ctx, q, args...)
}

// Query runs a query (inside the read scope of ctx, if any: ReadScope).
func (db *DB) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if tx := db.scopeTx(ctx); tx != nil {
		return tx.Query(ctx, q, args...)
	}
	if err := db.fault.hit("query", q); err != nil {
		return nil, err
	}
	q = Rebind(db.dialect, q)
	if st := db.stmt(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return db.SQL.QueryContext(ctx, q, args...)
}

// QueryRow runs a query expected to return at most one row (inside the
// read scope of ctx, if any: ReadScope).
func (db *DB) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if tx := db.scopeTx(ctx); tx != nil {
		return tx.QueryRow(ctx, q, args...)
	}
	if err := db.fault.hit("queryrow", q); err != nil {
		return db.faultRow(err)
	}
	q = Rebind(db.dialect, q)
	if st := db.stmt(ctx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return db.SQL.QueryRowContext(ctx, q, args...)
}

// Tx is a transaction of one dialect.
//
// On SQLite, InTx runs its transaction on a connection of its own with
// BEGIN IMMEDIATE and COMMIT (conn set, SQL nil): no database/sql
// transaction, whose watcher goroutines per transaction and per query cost
// more than the statements, and the connection keeps the statements it ran
// (serialConnector). A transaction to hand to a library (the job queue)
// comes from InSQLTx — which only queue.Queue.InTx calls — and has SQL.
type Tx struct {
	SQL     *sql.Tx   // nil for a SQLite transaction of InTx or a read scope
	conn    *sql.Conn // the connection of a SQLite transaction without SQL
	dialect Dialect
	db      *DB
	// gen is the settings generation read in this transaction since its last
	// statement that may have moved it (keepsGeneration); 0 unknown.
	gen int64
	// moved: a statement of the transaction may have moved the generation.
	moved bool
	// after runs once the transaction committed (AfterCommit).
	after []func()
}

// wrote forgets the transaction's generation when q may have moved it: a
// statement other than a plain SELECT, unless it is a write the schema
// keeps apart from the generation (keepsGeneration).
func (tx *Tx) wrote(q string) {
	if isSelect(q) || tx.keepsGeneration(q) {
		return
	}
	tx.gen, tx.moved = 0, true
	if tx.db != nil {
		tx.db.schemaChange(q)
	}
}

// schemaChange forgets what db's schema said about the settings generation
// (genMovers) when q may change the schema: a new trigger may move it.
func (db *DB) schemaChange(q string) {
	q = strings.TrimLeft(q, " \t\r\n")
	if len(q) < 4 {
		return
	}
	switch strings.ToUpper(q[:4]) {
	case "CREA", "DROP", "ALTE":
		db.forgetMovers()
	}
}

// isSelect reports whether q is a plain SELECT (it cannot write).
func isSelect(q string) bool {
	q = strings.TrimLeft(q, " \t\r\n")
	return len(q) >= 6 && strings.EqualFold(q[:6], "SELECT")
}

// prepared returns q's cached statement bound to the transaction, or nil.
func (tx *Tx) prepared(ctx context.Context, q string) *sql.Stmt {
	if tx.db == nil {
		return nil
	}
	if st := tx.db.cached(q); st != nil {
		return tx.SQL.StmtContext(ctx, st)
	}
	return nil
}

// Dialect reports the dialect.
func (tx *Tx) Dialect() Dialect { return tx.dialect }

// LockKey holds a lock on name and key until the transaction ends, so that
// transactions which check and then write under the same key (a count
// against a cap, say) run one after the other. On PostgreSQL it is a
// transaction advisory lock keyed by the schema, name and key (READ
// COMMITTED would let two of them count the same rows); SQLite's write
// transactions are serialised already, so there it does nothing.
func (tx *Tx) LockKey(ctx context.Context, name string, key int64) error {
	if tx.dialect != Postgres {
		return nil
	}
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || ':' || ? || ':' || ?, 0))",
		name, strconv.FormatInt(key, 10)); err != nil {
		return fmt.Errorf("lock %s %d: %w", name, key, err)
	}
	return nil
}

// Exec runs a statement.
func (tx *Tx) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if err := tx.hit("exec", q); err != nil {
		return nil, err
	}
	tx.wrote(q) // a plain SELECT run for its lock (FOR UPDATE, an advisory lock) keeps the generation
	if tx.conn != nil {
		tx.db.queries.Add(1)
		return tx.conn.ExecContext(ctx, q, args...)
	}
	q = Rebind(tx.dialect, q)
	if st := tx.prepared(ctx, q); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return tx.SQL.ExecContext(ctx, q, args...)
}

// Query runs a query.
func (tx *Tx) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if err := tx.hit("query", q); err != nil {
		return nil, err
	}
	tx.wrote(q)
	if tx.conn != nil {
		tx.db.queries.Add(1)
		return tx.conn.QueryContext(ctx, q, args...)
	}
	q = Rebind(tx.dialect, q)
	if st := tx.prepared(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return tx.SQL.QueryContext(ctx, q, args...)
}

// QueryRow runs a query expected to return at most one row.
func (tx *Tx) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if err := tx.hit("queryrow", q); err != nil {
		return tx.db.faultRow(err)
	}
	tx.wrote(q)
	if tx.conn != nil {
		tx.db.queries.Add(1)
		return tx.conn.QueryRowContext(ctx, q, args...)
	}
	q = Rebind(tx.dialect, q)
	if st := tx.prepared(ctx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return tx.SQL.QueryRowContext(ctx, q, args...)
}

// hit counts a statement of tx against the database's Fault.
func (tx *Tx) hit(op, q string) error {
	if tx.db == nil {
		return nil
	}
	return tx.db.fault.hit(op, q)
}

// Begin starts a database/sql transaction the caller ends (tests; code
// uses InTx). It takes no write lock and does not end a read scope.
func (db *DB) Begin(ctx context.Context) (*Tx, error) {
	db.prepare(ctx)
	t, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &Tx{SQL: t, dialect: db.dialect, db: db}, nil
}

// InTx runs fn in a transaction and commits when fn returns nil. A failed
// commit is reported as ErrCommitUnknown wrapped around the driver's error:
// the caller must not guess whether it landed.
//
// On SQLite, transactions of this process take a Go mutex before BEGIN
// IMMEDIATE (which would take the file's write lock anyway), the job queue's
// too (QueuePool): waiting writers queue on the mutex instead of sleeping in
// SQLite's busy handler. The transaction has no SQL (see Tx). fn must not
// start another transaction nor write through db: with nesting checked
// (Config.CheckNesting) both are ErrNestedTx, otherwise a deadlock on SQLite.
// Under a read scope, the scope's reads after InTx see what it wrote.
func (db *DB) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	if db.writeMu == nil || !db.fast {
		return db.inSQLTx(ctx, fn)
	}
	if err := db.fault.hit("begin", ""); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	unlock, err := db.lockWrite()
	if err != nil {
		return err
	}
	defer unlock()
	// A settings scope keeps its generation across a transaction that cannot
	// have moved it (Tx.keepsGeneration): the one the transaction read, the
	// generation at its commit (it held the one write lock from BEGIN
	// IMMEDIATE to COMMIT), else the one kept before. Any other transaction
	// drops it, before and after, as every write does.
	settings := settingsScopeOf(ctx, db)
	before := settings.kept()
	var handover int64
	db.scopeWrote(ctx)
	defer func() {
		db.scopeWrote(ctx)
		if handover != 0 {
			settings.keep(handover)
		}
	}()
	conn, err := begunConn(ctx, cmp.Or(db.writer, db.SQL), "BEGIN IMMEDIATE")
	if err != nil {
		return err
	}
	defer conn.Close()
	committed := false
	defer func() {
		if !committed {
			rollback(ctx, conn)
		}
	}()
	tx := &Tx{conn: conn, dialect: db.dialect, db: db}
	if err := fn(tx); err != nil {
		return err
	}
	if err := db.fault.hit("commit", ""); err != nil {
		return fmt.Errorf("%w: %w", ErrCommitUnknown, err) // the deferred rollback ends it
	}
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err != nil {
		return fmt.Errorf("%w: %w", ErrCommitUnknown, err) // the deferred rollback ends what is left
	}
	committed = true
	db.commits.Add(1)
	db.ckpt.committed()
	if !tx.moved {
		handover = cmp.Or(tx.gen, before)
	}
	tx.committed()
	return nil
}

// begunConn takes a connection of its own from pool and begins a
// transaction on it with begin (SQLite: "BEGIN IMMEDIATE" or a deferred
// "BEGIN").
func begunConn(ctx context.Context, pool *sql.DB, begin string) (*sql.Conn, error) {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	if _, err := conn.ExecContext(ctx, begin); err != nil {
		// The SQLite driver reports a context that ended during the call
		// as the call's error even when the BEGIN ran: end whatever began,
		// so that the pool is not handed a connection inside a transaction,
		// whose first read would fix a snapshot every later statement on it
		// sees (stale reads, and writes refused as SQLITE_BUSY_SNAPSHOT).
		rollback(ctx, conn)
		conn.Close()
		return nil, fmt.Errorf("begin: %w", err)
	}
	return conn, nil
}

// rollback ends conn's transaction. A connection whose transaction cannot
// be ended is dropped from the pool rather than handed to the next caller
// inside it.
func rollback(ctx context.Context, conn *sql.Conn) {
	_, err := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	if err != nil && !strings.Contains(err.Error(), "no transaction is active") {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
}

// InSQLTx is InTx with a database/sql transaction (tx.SQL set), for code
// that hands the transaction to a library. Only the job queue does
// (queue.Queue.InTx, which domain code calls); TestOnlyTheQueueBegins…
// in internal/queue keeps it so.
func (db *DB) InSQLTx(ctx context.Context, fn func(tx *Tx) error) error {
	return db.inSQLTx(ctx, fn)
}

func (db *DB) inSQLTx(ctx context.Context, fn func(tx *Tx) error) error {
	if err := db.fault.hit("begin", ""); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	unlock, err := db.lockWrite()
	if err != nil {
		return err
	}
	defer unlock()
	db.scopeWrote(ctx)
	defer db.scopeWrote(ctx)
	tx, err := db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.SQL.Rollback()
		return err
	}
	if err := db.fault.hit("commit", ""); err != nil {
		_ = tx.SQL.Rollback()
		return fmt.Errorf("%w: %w", ErrCommitUnknown, err)
	}
	if err := tx.SQL.Commit(); err != nil {
		return fmt.Errorf("%w: %w", ErrCommitUnknown, err)
	}
	db.commits.Add(1)
	db.ckpt.committed()
	tx.committed()
	return nil
}

// ErrNestedTx is returned by InTx, InSQLTx and Exec when they are called
// inside an InTx callback (with Config.CheckNesting): the write must go
// through the callback's Tx. On SQLite it would wait for the lock its own
// caller holds.
var ErrNestedTx = errors.New("store: a write through the database handle inside a transaction callback (use the Tx)")

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
