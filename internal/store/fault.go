package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// ErrInjected is the error of a database call a Fault failed.
// Callers see it as they would see a lost connection: wrapped,
// never as a refusal.
var ErrInjected = errors.New("store: injected fault")

// Fault fails the n-th database call of a DB opened with it
// (Config.Fault), for the fault proof: a test arms it
// with n, drives a tour, and sees what that one failure leaves behind.
//
// The calls counted are those the application makes through DB and Tx:
// DB.Exec, DB.Query, DB.QueryRow, the begin and the commit of InTx and
// InSQLTx, and Tx.Exec, Tx.Query, Tx.QueryRow. The job queue's own
// statements on QueuePool (River's fetches and completions) are not
// counted: their number depends on timing, not on the tour. A failed begin
// runs nothing; a failed statement runs nothing and returns ErrInjected; a
// failed commit rolls the transaction back and returns ErrCommitUnknown
// wrapped around ErrInjected, as a commit whose fate the caller cannot know.
// A Fault is safe for concurrent use.
type Fault struct {
	mu    sync.Mutex // guards the fields below
	armed bool
	calls int64  // calls counted since Arm
	at    int64  // the call to fail; 0 none
	match string // ArmQuery: only calls whose statement contains it count toward at
	seen  int64  // ArmQuery: matching calls since Arm
	fired *FaultCall
}

// FaultCall is the call a Fault failed.
type FaultCall struct {
	N     int64  // its number since Arm, from 1
	Op    string // "exec", "query", "queryrow", "begin", "commit"
	Query string // the statement ("" for begin and commit)
}

func (c FaultCall) String() string {
	if c.Query == "" {
		return fmt.Sprintf("call %d (%s)", c.N, c.Op)
	}
	return fmt.Sprintf("call %d (%s %s)", c.N, c.Op, c.Query)
}

// Arm starts counting calls from zero and fails the n-th; n = 0 only counts
// (the dry run that measures a tour).
func (f *Fault) Arm(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed, f.calls, f.at, f.match, f.seen, f.fired = true, 0, n, "", 0, nil
}

// ArmQuery is Arm for the k-th call whose statement contains part (a
// regression test that fails one known step); calls are counted as by Arm.
func (f *Fault) ArmQuery(part string, k int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed, f.calls, f.at, f.match, f.seen, f.fired = true, 0, k, part, 0, nil
}

// Disarm stops counting and failing, and returns the calls counted since Arm.
func (f *Fault) Disarm() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed = false
	return f.calls
}

// Calls returns the calls counted since Arm.
func (f *Fault) Calls() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// Fired returns the call that was failed since Arm, if one was.
func (f *Fault) Fired() (FaultCall, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fired == nil {
		return FaultCall{}, false
	}
	return *f.fired, true
}

// hit counts one call and reports whether it is the one to fail.
func (f *Fault) hit(op, q string) error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.armed {
		return nil
	}
	f.calls++
	n := f.calls
	if f.match != "" {
		if !strings.Contains(q, f.match) {
			return nil
		}
		f.seen++
		n = f.seen
	}
	if n != f.at || f.fired != nil {
		return nil
	}
	f.fired = &FaultCall{N: f.calls, Op: op, Query: q}
	return fmt.Errorf("%s: %w", op, ErrInjected)
}

// faultRow returns a row whose Scan returns err: database/sql hands back
// the error of a context that is done before it takes a connection, so the
// row comes from a context whose Err is err.
func (db *DB) faultRow(err error) *sql.Row {
	return db.SQL.QueryRowContext(doneContext{err: err}, "SELECT 1")
}

// doneContext is a context that is done with err from the start (faultRow).
type doneContext struct{ err error }

var closedDone = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (doneContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (doneContext) Done() <-chan struct{}       { return closedDone }
func (c doneContext) Err() error                { return c.err }
func (doneContext) Value(any) any               { return nil }

var _ context.Context = doneContext{}
