package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The background checkpointer copies the log back into the database file
// while the writers go on: after commits that stay below the writers' own
// threshold, the database file holds their rows (without it, they would
// all still be in the log).
func TestBackgroundCheckpointsCopyTheLogWithoutTheWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ckpt.db")
	db, err := Open(ctx, "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !db.FastPaths() {
		t.Skipf("%s=1: no background checkpointer", EnvNoFastPaths)
	}
	if _, err := db.Exec(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"); err != nil {
		t.Fatal(err)
	}
	const commits = 10 * checkpointEvery // about 1,000 log pages: below 4,000
	pad := strings.Repeat("x", 3000)     // about a page per commit
	for i := 0; i < commits; i++ {
		if err := db.InTx(ctx, func(tx *Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO t (v) VALUES (?)", pad)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// Wake-ups that find a checkpoint pending are dropped, but the pending
	// one starts after them: the last commit is copied back in the end.
	min := int64(commits) * 3000
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	for deadline := time.Now().Add(10 * time.Second); size() < min && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if got := size(); got < min {
		t.Errorf("database file is %d bytes after %d commits of 3,000 bytes, want at least %d: the log was not copied back (%d checkpoints)",
			got, commits, min, db.ckpt.rounds.Load())
	}
	var n int
	if err := db.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != commits {
		t.Errorf("rows = %d, %v; want %d", n, err, commits)
	}
}

// Close stops the checkpointer, without hanging, and a second Close finds it stopped.
func TestCloseStopsTheCheckpointer(t *testing.T) {
	db, err := Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	if !db.FastPaths() {
		db.Close()
		t.Skipf("%s=1: no background checkpointer", EnvNoFastPaths)
	}
	ck := db.ckpt
	done := make(chan error, 1)
	go func() { done <- db.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs")
	}
	select {
	case <-ck.done:
	default:
		t.Error("checkpointer still running after Close")
	}
	_ = db.Close() // the pools report their own second close; the checkpointer must not panic
}
