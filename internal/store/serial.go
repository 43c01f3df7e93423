package store

import (
	"context"
	"database/sql/driver"
	"path/filepath"
	"sync"

	"modernc.org/sqlite"
)

// serialConnector opens SQLite connections that do two things on top of the
// driver's.
//
// With mu set (the job queue's pool), writes queue on the database's write
// mutex, the one InTx takes: a write transaction (BEGIN IMMEDIATE) holds it
// from begin to commit or rollback, a write outside a transaction for its
// statement. So the queue's writers and the runtime's wait for each other in
// Go instead of in SQLite's busy handler, which sleeps a millisecond and more
// per retry while the write lock stays unused. Read-only transactions and
// queries take no lock (WAL readers never wait for the writer).
//
// Every connection keeps the statements of the queries and writes it was
// sent without preparing them (the job queue sends all of its queries so,
// and parsing them was a fifth of a queued run's CPU; InTx's transactions
// too), and runs them again from their statements. A query is kept unless
// it holds more than one statement; a ';' in a comment or a string does not
// count (the job queue's completion has one in a comment, and was prepared
// anew for every job). SQLite compiles the value bound to a LIMIT or
// OFFSET into the statement and compiles it again whenever that value
// changes (the job queue fetches with LIMIT ?, the number of free workers),
// so such a query keeps one statement per LIMIT and OFFSET value (shape).
type serialConnector struct {
	dsn string
	mu  *writeLock // nil: writes take no lock (InTx locks before it takes a connection)
	// noKeep turns the kept statements off (Config.NoFastPaths).
	noKeep bool
	// ckpt, when set, counts the commits of this pool's writers (the job
	// queue's) toward the next background checkpoint (checkpoint.go).
	ckpt *checkpointer
}

var sqliteDriver = &sqlite.Driver{}

// writeLocks holds the write lock of each SQLite file, by absolute path.
var writeLocks sync.Map

func writeLockOf(path string) *writeLock {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	mu, _ := writeLocks.LoadOrStore(path, &writeLock{})
	return mu.(*writeLock)
}

func (c *serialConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := sqliteDriver.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &serialConn{Conn: conn, mu: c.mu, ckpt: c.ckpt, noKeep: c.noKeep}, nil
}

func (c *serialConnector) Driver() driver.Driver { return sqliteDriver }

// sqliteConn is what the SQLite driver's connections implement.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.SessionResetter
	driver.Validator
	driver.Pinger
}

type serialConn struct {
	driver.Conn
	mu     *writeLock
	ckpt   *checkpointer
	noKeep bool
	inTx   bool                   // a write transaction of this connection holds mu
	stmts  map[string]*cachedStmt // statements of unprepared queries, by stmtKey
	shapes map[string]shape       // what shapeOf found in each query text sent
}

// cachedStmt is a kept statement; busy while rows of it are open.
type cachedStmt struct {
	st   sqliteStmt
	busy bool
}

// maxConnStmts bounds the statements one connection keeps (and the query
// shapes it remembers, four times as many).
const maxConnStmts = 128

func (c *serialConn) inner() sqliteConn { return c.Conn.(sqliteConn) }

func (c *serialConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *serialConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if opts.ReadOnly || c.mu == nil {
		return c.inner().BeginTx(ctx, opts)
	}
	if err := c.mu.lock(); err != nil {
		return nil, err
	}
	tx, err := c.inner().BeginTx(ctx, opts)
	if err != nil {
		c.mu.unlock()
		return nil, err
	}
	c.inTx = true
	return &serialTx{Tx: tx, c: c}, nil
}

func (c *serialConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *serialConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.inner().PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &serialStmt{Stmt: st, c: c}, nil
}

// lockWrite takes the mutex for a write outside a transaction and returns
// its release, which counts the write's commit.
func (c *serialConn) lockWrite() (func(), error) {
	if c.inTx || c.mu == nil {
		return func() {}, nil
	}
	if err := c.mu.lock(); err != nil {
		return nil, err
	}
	return func() {
		c.mu.unlock()
		c.ckpt.committed()
	}, nil
}

func (c *serialConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	unlock, err := c.lockWrite()
	if err != nil {
		return nil, err
	}
	defer unlock()
	cs, err := c.kept(ctx, query, args)
	if err != nil {
		return nil, err
	}
	if cs == nil || cs.busy {
		return c.inner().ExecContext(ctx, query, args)
	}
	return cs.st.ExecContext(ctx, args)
}

// kept returns the connection's statement of query run with args,
// preparing it at the first use; nil for a query with more than one
// statement or past the bound.
func (c *serialConn) kept(ctx context.Context, query string, args []driver.NamedValue) (*cachedStmt, error) {
	if c.noKeep {
		return nil, nil
	}
	sh, ok := c.shapes[query]
	if !ok {
		sh = shapeOf(query)
		if c.shapes == nil || len(c.shapes) >= 4*maxConnStmts {
			c.shapes = map[string]shape{}
		}
		c.shapes[query] = sh
	}
	if sh.multi {
		return nil, nil
	}
	key := sh.stmtKey(query, args)
	if cs := c.stmts[key]; cs != nil {
		return cs, nil
	}
	if len(c.stmts) >= maxConnStmts {
		return nil, nil
	}
	st, err := c.inner().PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if c.stmts == nil {
		c.stmts = map[string]*cachedStmt{}
	}
	cs := &cachedStmt{st: st.(sqliteStmt)}
	c.stmts[key] = cs
	return cs, nil
}

// QueryContext runs query from the connection's statement of it, prepared at
// the first use. A query with more than one statement, one whose statement
// has rows open, or one past the bound runs as the driver runs it.
func (c *serialConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.kept(ctx, query, args)
	if err != nil {
		return nil, err
	}
	if cs == nil || cs.busy {
		return c.inner().QueryContext(ctx, query, args)
	}
	rows, err := cs.st.QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	cs.busy = true
	return &cachedRows{Rows: rows, cs: cs}, nil
}

// cachedRows frees its statement for the next run when closed.
type cachedRows struct {
	driver.Rows
	cs *cachedStmt
}

func (r *cachedRows) Close() error {
	r.cs.busy = false
	return r.Rows.Close()
}

func (c *serialConn) Close() error {
	if c.inTx { // closed inside a transaction: the transaction is gone with it
		c.inTx = false
		c.mu.unlock()
	}
	for _, cs := range c.stmts {
		cs.st.Close()
	}
	c.stmts = nil
	return c.Conn.Close()
}

func (c *serialConn) ResetSession(ctx context.Context) error { return c.inner().ResetSession(ctx) }
func (c *serialConn) IsValid() bool                          { return c.inner().IsValid() }
func (c *serialConn) Ping(ctx context.Context) error         { return c.inner().Ping(ctx) }

type serialTx struct {
	driver.Tx
	c *serialConn
}

func (t *serialTx) Commit() error {
	defer t.end()
	if err := t.Tx.Commit(); err != nil {
		return err
	}
	t.c.ckpt.committed()
	return nil
}

func (t *serialTx) Rollback() error {
	defer t.end()
	return t.Tx.Rollback()
}

func (t *serialTx) end() {
	if t.c.inTx {
		t.c.inTx = false
		t.c.mu.unlock()
	}
}

// sqliteStmt is what the SQLite driver's statements implement.
type sqliteStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

type serialStmt struct {
	driver.Stmt
	c *serialConn
}

func (s *serialStmt) inner() sqliteStmt { return s.Stmt.(sqliteStmt) }

func (s *serialStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	unlock, err := s.c.lockWrite()
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.inner().ExecContext(ctx, args)
}

func (s *serialStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.inner().QueryContext(ctx, args)
}

var (
	_ driver.Connector = (*serialConnector)(nil)
	_ sqliteConn       = (*serialConn)(nil)
	_ sqliteStmt       = (*serialStmt)(nil)
)
