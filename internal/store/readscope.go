package store

import (
	"context"
	"sync"
)

// readScope is one read-only transaction shared by the reads of a stretch of
// code (see ReadScope).
type readScope struct {
	db     *DB
	ctx    context.Context
	mu     sync.Mutex
	tx     *Tx // begun at the first read; nil before, or when beginning failed
	failed bool
	// wrote is set by a write through db under the scope (DB.Exec, InTx):
	// from then on the scope serves no read from its snapshot, which cannot
	// see the write, nor its generation.
	wrote bool
	gen   int64 // the settings generation, once read in this snapshot
}

type readScopeKey struct{}

// ReadScope returns a context under which the reads of db (DB.Query,
// DB.QueryRow) share one read-only transaction, begun at the first read, and
// a function that ends it. On SQLite a burst of reads then takes the
// snapshot and its locks once instead of once per statement, and the
// settings generation is read once. It is meant for a stretch that only
// reads; a write through db under the scope (DB.Exec, InTx) ends its use of
// the snapshot, so a read after it sees the write (it goes to the pool).
// On PostgreSQL (where a transaction costs round trips) the reads go to the
// pool one by one, each seeing the latest commit, and the scope is a
// settings scope (SettingsScope): the generation is read once, as under
// SQLite's snapshot. With the fast paths off it does nothing.
func (db *DB) ReadScope(ctx context.Context) (context.Context, func()) {
	if !db.fast {
		return ctx, func() {}
	}
	if db.dialect != SQLite {
		return db.SettingsScope(ctx)
	}
	if s, ok := ctx.Value(readScopeKey{}).(*readScope); ok && s.db == db {
		return ctx, func() {} // already in one: the outer scope ends it
	}
	s := &readScope{db: db, ctx: ctx}
	return context.WithValue(ctx, readScopeKey{}, s), s.end
}

// scopeTx returns the scope's transaction for db's reads under ctx, or nil.
func (db *DB) scopeTx(ctx context.Context) *Tx {
	s, ok := ctx.Value(readScopeKey{}).(*readScope)
	if !ok || s.db != db {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wrote {
		return nil
	}
	if s.tx == nil && !s.failed {
		conn, err := begunConn(s.ctx, db.SQL, "BEGIN") // deferred: the snapshot starts at the first read
		if err != nil {
			s.failed = true // the reads go to the pool one by one
			return nil
		}
		s.tx = &Tx{conn: conn, dialect: db.dialect, db: db}
	}
	return s.tx
}

// scopedGeneration returns the generation kept by the read scope under ctx, if any.
func scopedGeneration(ctx context.Context, db *DB) (*readScope, int64, bool) {
	s, ok := ctx.Value(readScopeKey{}).(*readScope)
	if !ok || s.db != db {
		return nil, 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wrote {
		return nil, 0, false
	}
	return s, s.gen, s.gen != 0
}

// scopeWrote notes a write through db under ctx's read scope and settings
// scope, if any (called before the write and, for the settings scope's sake,
// after it: a generation read meanwhile may predate the write's commit). The
// snapshot's transaction stays open until the scope ends (rows of it may
// still be open); the scope only serves nothing from it any more.
func (db *DB) scopeWrote(ctx context.Context) {
	settingsScopeOf(ctx, db).drop()
	s, ok := ctx.Value(readScopeKey{}).(*readScope)
	if !ok || s.db != db {
		return
	}
	s.mu.Lock()
	s.wrote = true
	s.gen = 0
	s.mu.Unlock()
}

func (s *readScope) keepGeneration(gen int64) {
	s.mu.Lock()
	s.gen = gen
	s.mu.Unlock()
}

func (s *readScope) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tx != nil {
		rollback(s.ctx, s.tx.conn) // read only: nothing to keep
		s.tx.conn.Close()
		s.tx = nil
	}
	s.failed = true // a read after the end goes to the pool
}
