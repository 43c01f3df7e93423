package store

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

// writeLock is a SQLite file's write mutex (see InTx and serialConnector).
// With checked set (Config.CheckNesting) it remembers the goroutine holding
// it, so that the holder asking again — a write through the DB handle inside
// an InTx callback — gets ErrNestedTx instead of waiting for itself forever.
type writeLock struct {
	mu      sync.Mutex
	checked atomic.Bool
	holder  atomic.Int64 // goroutine holding mu when checked; 0 none or unchecked
}

// lock takes the mutex; ErrNestedTx when the calling goroutine holds it.
func (l *writeLock) lock() error {
	if !l.checked.Load() {
		l.mu.Lock()
		return nil
	}
	me := goroutineID()
	if !l.mu.TryLock() {
		if l.holder.Load() == me {
			return ErrNestedTx
		}
		l.mu.Lock()
	}
	l.holder.Store(me)
	return nil
}

func (l *writeLock) unlock() {
	l.holder.Store(0)
	l.mu.Unlock()
}

// holderSet is the goroutines inside a transaction of a PostgreSQL database
// when nesting is checked: there a nested write does not deadlock, but it
// breaks the rule SQLite enforces, so the PostgreSQL half of a test sees it too.
type holderSet struct {
	mu  sync.Mutex // guards ids
	ids map[int64]bool
}

func (h *holderSet) enter() (int64, error) {
	me := goroutineID()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ids[me] {
		return 0, ErrNestedTx
	}
	if h.ids == nil {
		h.ids = map[int64]bool{}
	}
	h.ids[me] = true
	return me, nil
}

func (h *holderSet) leave(id int64) {
	h.mu.Lock()
	delete(h.ids, id)
	h.mu.Unlock()
}

// lockWrite takes what a write through db must hold: the write mutex on
// SQLite, a place in the holder set on PostgreSQL with nesting checked, or
// nothing. It returns the release.
func (db *DB) lockWrite() (func(), error) {
	switch {
	case db.writeMu != nil:
		if err := db.writeMu.lock(); err != nil {
			return nil, err
		}
		return db.writeMu.unlock, nil
	case db.holders != nil:
		id, err := db.holders.enter()
		if err != nil {
			return nil, err
		}
		return func() { db.holders.leave(id) }, nil
	}
	return func() {}, nil
}

// goroutineID reads the calling goroutine's id from its stack header
// ("goroutine 12 [running]:"). It costs a stack walk, which is why only
// checked locks (tests) call it.
func goroutineID() int64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseInt(string(b), 10, 64)
	return id
}
