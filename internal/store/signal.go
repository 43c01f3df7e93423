package store

import "sync"

// signals is the in-process broadcast of changes by key (Watch, Signal):
// one channel per watched key, closed and replaced when the key changes.
// Keys nobody watches cost nothing: Signal drops them.
type signals struct {
	mu sync.Mutex
	m  map[string]*watch
}

type watch struct {
	ch       chan struct{}
	watchers int
}

// Watch returns a channel that is closed at the next Signal of key in this
// process, and a function that ends the watch (call it once, when done
// waiting). A waiter watches before it reads what it waits on, then waits
// on the channel: a change committed after the read closes it, so none is
// missed. It is the wake-up of a client waiting for a change (issue 15:
// GET /api/conversations/{id}?wait=…); a change committed by another
// process is not signalled here, so a waiter also checks the database now
// and then (or listens on PostgreSQL).
func (db *DB) Watch(key string) (<-chan struct{}, func()) {
	s := &db.signals
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
// (its own transaction).
func SignalAfter(q Querier, key string) {
	switch q := q.(type) {
	case *Tx:
		db := q.db
		q.AfterCommit(func() { db.Signal(key) })
	case *DB:
		q.Signal(key)
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
