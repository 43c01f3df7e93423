package store

import (
	"context"
	"sync"
	"time"
)

// signals is the in-process broadcast of changes by key (Watch, Signal):
// one channel per watched key, closed and replaced when the key changes.
// Keys nobody watches cost nothing: Signal drops them. On PostgreSQL a
// signal also goes to the other processes on the database (NOTIFY at the
// commit, one LISTEN connection per process: listen).
type signals struct {
	mu sync.Mutex
	m  map[string]*watch

	listenOnce sync.Once
	stop       context.CancelFunc // ends the listener (DB.Close); nil before it started
	stopped    chan struct{}      // closed when the listener has ended
}

// signalChannel is the PostgreSQL notification channel of signals.
const signalChannel = "waymark_signal"

type watch struct {
	ch       chan struct{}
	watchers int
}

// Watch returns a channel that is closed at the next Signal of key in this
// process, and a function that ends the watch (call it once, when done
// waiting). A waiter watches before it reads what it waits on, then waits
// on the channel: a change committed after the read closes it, so none is
// missed. It is the wake-up of a client waiting for a change (
// GET /api/conversations/{id}?wait=…); a change committed by another
// process is not signalled here, so a waiter also checks the database now
// and then (or listens on PostgreSQL).
func (db *DB) Watch(key string) (<-chan struct{}, func()) {
	s := &db.signals
	db.ListenForSignals()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*watch{}
	}
	w := s.m[key]
	if w == nil {
		w = &watch{ch: make(chan struct{})}
		s.m[key] = w
	}
	w.watchers++
	ch := w.ch
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if w := s.m[key]; w != nil {
				if w.watchers--; w.watchers <= 0 {
					delete(s.m, key)
				}
			}
		})
	}
}

// Signal wakes every watcher of key in this process (see Watch). Call it
// after the change committed: inside a transaction use SignalAfter, which
// waits for the commit.
func (db *DB) Signal(key string) {
	s := &db.signals
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.m[key]; w != nil {
		close(w.ch)
		w.ch = make(chan struct{}) // the watchers of the next change wait on this one
	}
}

// AfterCommit runs f once the transaction committed (never if it rolls
// back), on the goroutine that committed it.
func (tx *Tx) AfterCommit(f func()) {
	tx.after = append(tx.after, f)
}

func (tx *Tx) committed() {
	for _, f := range tx.after {
		f()
	}
	tx.after = nil
}

// SignalAfter signals key (DB.Signal) once what q wrote is committed: at
// the commit of a transaction, at once for a statement of the DB handle
// (its own transaction). On PostgreSQL it also notifies the other processes
// (pg_notify, delivered at the commit); inside a transaction an error of
// that is returned.
func SignalAfter(ctx context.Context, q Querier, key string) error {
	notify := "SELECT pg_notify('" + signalChannel + "', ?)"
	switch q := q.(type) {
	case *Tx:
		if q.dialect == Postgres {
			if _, err := q.Exec(ctx, notify, key); err != nil {
				return err // the transaction is spoilt on PostgreSQL anyway
			}
		}
		db := q.db
		q.AfterCommit(func() { db.Signal(key) })
	case *DB:
		if q.dialect == Postgres {
			_, _ = q.Exec(ctx, notify, key) // the change is committed: a lost notification is what the waiters' checks are for
		}
		q.Signal(key)
	}
	return nil
}

// ListenForSignals starts now, instead of at the first Watch, this
// process's listener of the other processes' signals (PostgreSQL; nothing
// on SQLite, whose signals stay in their process): a worker then hears the
// cancel of a turn it runs from its first turn on.
func (db *DB) ListenForSignals() {
	if db.dialect == Postgres {
		db.signals.listenOnce.Do(db.startListener)
	}
}

// startListener starts the one goroutine of this process that LISTENs for
// the signals of the other processes on PostgreSQL (on a connection of
// ListenPool, through pgx) and signals them here; it reconnects after an
// error. A signal lost while it reconnects is what a waiter's own periodic
// check is for.
func (db *DB) startListener() {
	ctx, cancel := context.WithCancel(context.Background())
	s := &db.signals
	s.mu.Lock()
	s.stop, s.stopped = cancel, make(chan struct{})
	s.mu.Unlock()
	go func() {
		defer close(s.stopped)
		for ctx.Err() == nil {
			db.listenOnce(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
}

// listenOnce listens until an error or ctx ends.
func (db *DB) listenOnce(ctx context.Context) {
	pool, err := db.ListenPool(ctx)
	if err != nil {
		return
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return
	}
	if _, err := conn.Exec(ctx, "LISTEN "+signalChannel); err != nil {
		conn.Release()
		return
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			// The connection may be mid-wait or broken: never hand it back.
			_ = conn.Hijack().Close(context.Background())
			return
		}
		db.Signal(n.Payload)
	}
}

// stopListener ends the listener, if it started (DB.Close).
func (db *DB) stopListener() {
	s := &db.signals
	s.mu.Lock()
	stop, stopped := s.stop, s.stopped
	s.mu.Unlock()
	if stop != nil {
		stop()
		<-stopped
	}
}

// Watchers reports how many watches of key are open in this process (tests
// and metrics: a waiter is in place).
func (db *DB) Watchers(key string) int {
	s := &db.signals
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.m[key]; w != nil {
		return w.watchers
	}
	return 0
}
