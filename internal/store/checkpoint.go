package store

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"
)

// checkpointEvery is how many commits of this process pass between two
// background checkpoints (at about 3 WAL pages per commit, some 300 pages;
// measured on the approval cycle: every 100 commits 1,232–1,287 cycles/s,
// every 500 1,206–1,248, none 1,186–1,201; every 30 no better than 100).
const checkpointEvery = 100

// checkpointer copies a SQLite database's write-ahead log back into the
// database file on a connection of its own, off the writers' path. A
// checkpoint writes and syncs every page the log holds; without this, the
// writer whose commit crossed wal_autocheckpoint (4,000 pages) copied all of
// them inside its transaction, with the write lock held — up to 18 ms, and
// the top 1 % of commits were 55 % of all commit time. A PASSIVE checkpoint
// takes no write lock, so the writers go on meanwhile; the log then is
// restarted by the writers' own checkpoint, which finds little left to copy.
type checkpointer struct {
	dsn     string
	commits atomic.Int64
	rounds  atomic.Int64 // checkpoints run
	wake    chan struct{}
	stop    chan struct{}
	stopped sync.Once
	done    chan struct{}
}

func startCheckpointer(dsn string) *checkpointer {
	c := &checkpointer{dsn: dsn, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// committed counts a commit and wakes the checkpointer every checkpointEvery.
func (c *checkpointer) committed() {
	if c != nil && c.commits.Add(1)%checkpointEvery == 0 {
		select {
		case c.wake <- struct{}{}:
		default: // one is running or pending already
		}
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	var pool *sql.DB
	defer func() {
		if pool != nil {
			pool.Close()
		}
	}()
	for {
		select {
		case <-c.stop:
			return
		case <-c.wake:
		}
		if pool == nil {
			pool = sql.OpenDB(&serialConnector{dsn: c.dsn})
			pool.SetMaxOpenConns(1)
			pool.SetMaxIdleConns(1)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		// An error (a busy or closing database) only leaves the work to
		// the next round or the writers' automatic checkpoint.
		_, _ = pool.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
		cancel()
		c.rounds.Add(1)
	}
}

// close stops the checkpointer and waits for a running checkpoint; once
// stopped, it stays stopped.
func (c *checkpointer) close() {
	if c == nil {
		return
	}
	c.stopped.Do(func() { close(c.stop) })
	<-c.done
}
