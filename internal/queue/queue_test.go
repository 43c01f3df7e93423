package queue_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"waymark/internal/queue"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

type recorder struct {
	mu   sync.Mutex // guards runs
	runs []string
	got  chan string
}

func (r *recorder) RunQueued(ctx context.Context, uuid string) error {
	r.mu.Lock()
	r.runs = append(r.runs, uuid)
	r.mu.Unlock()
	r.got <- uuid
	return nil
}

// started is a queue on db with cfg, migrated and working h until the test ends.
func started(t *testing.T, db *store.DB, cfg queue.Config, h queue.Handlers) *queue.Queue {
	t.Helper()
	ctx := context.Background()
	q, err := queue.New(db, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx, h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Stop(context.Background()) })
	return q
}

func TestJobInsertedInTxIsWorkedOnlyAfterCommit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		rec := &recorder{got: make(chan string, 4)}
		q := started(t, db, queue.Config{Workers: 2, PollInterval: 20 * time.Millisecond}, queue.Handlers{Runs: rec})

		// A rolled-back insert is never worked.
		tx, err := db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.InsertTx(ctx, tx, "rolled-back", 0); err != nil {
			t.Fatal(err)
		}
		_ = tx.SQL.Rollback()

		if err := db.InSQLTx(ctx, func(tx *store.Tx) error { return q.InsertTx(ctx, tx, "run-1", 0) }); err != nil {
			t.Fatal(err)
		}
		// On SQLite, InTx's transaction has no database/sql one: refused with a clear error.
		if db.Dialect() == store.SQLite {
			err := db.InTx(ctx, func(tx *store.Tx) error { return q.InsertTx(ctx, tx, "no-sql-tx", 0) })
			if !errors.Is(err, queue.ErrNeedsSQLTx) {
				t.Errorf("InsertTx in InTx on SQLite = %v, want ErrNeedsSQLTx", err)
			}
		}
		select {
		case got := <-rec.got:
			if got != "run-1" {
				t.Fatalf("worked %q, want run-1", got)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("job was not worked within 15s")
		}
		n, err := q.Depth(ctx, db)
		if err != nil || n != 0 {
			t.Errorf("Depth = %d, %v; want 0", n, err)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, r := range rec.runs {
			if r == "rolled-back" {
				t.Error("a rolled-back job was worked")
			}
		}
	})
}

func TestNewRejectsBadConfig(t *testing.T) {
	db := storetest.SQLite(t)
	q, err := queue.New(db, &queue.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background(), queue.Handlers{}); !errors.Is(err, queue.ErrNoHandler) {
		t.Errorf("workers without handler accepted: Start = %v", err)
	}
	if _, err := queue.New(db, &queue.Config{Workers: -1}); err == nil {
		t.Error("negative workers accepted")
	}
}

// The reaper is the queue's periodic job, inserted by the
// elected leader (here the one process) and worked by a worker.
func TestTheReaperRunsAsAPeriodicJobOfTheQueue(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		reaped := make(chan struct{}, 1)
		started(t, db, queue.Config{Workers: 1, PollInterval: 20 * time.Millisecond, Reaper: true, ReapEvery: time.Hour},
			queue.Handlers{Runs: &recorder{got: make(chan string, 1)}, Reap: func(context.Context) error {
				select {
				case reaped <- struct{}{}:
				default:
				}
				return nil
			}})
		select {
		case <-reaped:
		case <-time.After(20 * time.Second):
			t.Fatal("the reaper did not run within 20s of the start")
		}
	})
}

// On PostgreSQL a queue with workers listens for inserts
// (River's pgx listener); an insert-only queue opens no listener.
func TestWorkersListenForInsertsOnPostgres(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		w, err := queue.New(db, &queue.Config{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if want := db.Dialect() == store.Postgres; w.Listening != want {
			t.Errorf("Listening with workers on %s = %v, want %v", db.Dialect(), w.Listening, want)
		}
		i, err := queue.New(db, &queue.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if i.Listening {
			t.Error("an insert-only queue listens")
		}
	})
}

// The queue owns River's transaction: a job inserted in Queue.InTx commits
// with the transaction's rows, and a failed callback leaves neither.
func TestQueueInTxCommitsTheJobWithTheRowsOrNeither(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q, err := queue.New(db, &queue.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("refused")
		err = q.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.Exec(ctx, `INSERT INTO be_groups (uid, title) VALUES (970, 'rolled back')`); err != nil {
				return err
			}
			if err := q.InsertTx(ctx, tx, "rolled-back", 0); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("InTx = %v, want the callback's error", err)
		}
		if n, err := q.Depth(ctx, db); err != nil || n != 0 {
			t.Errorf("after the rollback Depth = %d, %v; want 0", n, err)
		}
		if err := q.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.Exec(ctx, `INSERT INTO be_groups (uid, title) VALUES (971, 'kept')`); err != nil {
				return err
			}
			return q.InsertTx(ctx, tx, "run-1", 0)
		}); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM be_groups WHERE uid IN (970, 971)").Scan(&n); err != nil || n != 1 {
			t.Errorf("stored rows = %d, %v; want the committed one", n, err)
		}
		if n, err := q.Depth(ctx, db); err != nil || n != 1 {
			t.Errorf("Depth = %d, %v; want the committed job", n, err)
		}
	})
}

// No domain code chooses between store.DB.InTx and InSQLTx: outside store
// and queue, no non-test file calls InSQLTx (enqueuers use Queue.InTx).
func TestOnlyTheQueueBeginsDatabaseSQLTransactions(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == filepath.Join("internal", "store") || rel == filepath.Join("internal", "queue") || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(src), "InSQLTx") {
			t.Errorf("%s calls store.DB.InSQLTx: enqueue through queue.Queue.InTx", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// On SQLite a job this process committed is taken at once, not at
// the workers' next poll — River takes the insert notification the kick
// delivers (kick.go). The poll here is a minute, and each transaction removes
// River's own notification from its outbox, so only the kick can wake the
// worker within the test's bound.
func TestASQLiteJobCommittedHereIsTakenWithoutWaitingForThePoll(t *testing.T) {
	db := storetest.Open(t, store.SQLite)
	ctx := context.Background()
	rec := &recorder{got: make(chan string, 4)}
	q := started(t, db, queue.Config{Workers: 1, PollInterval: time.Minute}, queue.Handlers{Runs: rec})
	taken := func(run string) {
		t.Helper()
		if err := db.InSQLTx(ctx, func(tx *store.Tx) error {
			if err := q.InsertTx(ctx, tx, run, 0); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "DELETE FROM river_notification")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-rec.got:
			if got != run {
				t.Fatalf("worked %q, want %q", got, run)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("%s was not taken within 15 s (the poll is a minute)", run)
		}
	}
	taken("first") // the worker is up (its first fetch may take this one)
	for _, run := range []string{"second", "third"} {
		// River fetches again right after a job is done; once that has
		// passed, the producer waits on its poll (a minute) — or a kick.
		time.Sleep(300 * time.Millisecond)
		taken(run)
	}
}
