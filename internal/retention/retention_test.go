package retention_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"waymark/internal/clock"
	"waymark/internal/retention"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// finished creates a run completed now by clk and returns its uuid.
func finished(t *testing.T, db *store.DB, clk clock.Clock) string {
	t.Helper()
	ctx := context.Background()
	runs := run.NewStore(db, clk)
	id := uuid.NewString()
	if err := runs.Create(ctx, run.Run{UUID: id, Configuration: 3, Initiator: 7, Status: run.StatusQueued,
		Request: []byte(`{"messages":[{"role":"user","content":"hi"}]}`)}); err != nil {
		t.Fatalf("create run: %v", err)
	}
	if won, err := runs.Claim(ctx, id, "worker:a", time.Minute); err != nil || !won {
		t.Fatalf("claim run: %v %v", won, err)
	}
	if won, err := runs.Settle(ctx, id, run.Settlement{Owner: "worker:a", Status: run.StatusCompleted, Reason: run.ReasonCompleted}); err != nil || !won {
		t.Fatalf("settle run: %v %v", won, err)
	}
	return id
}

func exists(t *testing.T, db *store.DB, id string) bool {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM runs WHERE uuid = ?", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// waitGone waits until run id is deleted, for at most ten seconds.
func waitGone(t *testing.T, db *store.DB, id, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); exists(t, db, id); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: run %s still there after 10 s", what, id)
		}
	}
}

// A scheduled purge deletes a finished run past retention at start and at
// every tick after, with no purge run by hand, and keeps one within it.
func TestScheduledPurgeDeletesExpiredFinishedRunsAtStartAndEveryTick(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.NewFake(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
		first := finished(t, db, clk)
		clk.Advance(31 * 24 * time.Hour)
		p, err := retention.New(db, &retention.Config{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		ticks := make(chan time.Time)
		stop := p.Schedule(context.Background(), time.Hour, ticks)
		defer stop()
		waitGone(t, db, first, "purge at start")
		second := finished(t, db, clk)
		clk.Advance(29 * 24 * time.Hour)
		recent := finished(t, db, clk)
		clk.Advance(2 * 24 * time.Hour) // second is 31 days old, recent 2 days
		ticks <- clk.Now()
		waitGone(t, db, second, "purge at a tick")
		stop()
		if !exists(t, db, recent) {
			t.Errorf("a run finished 2 days ago was purged (retention 30 days)")
		}
	})
}

// On PostgreSQL one process purges at a time: while another holds the
// purge lock a purge deletes nothing and says it was skipped; once the
// lock is free it purges.
func TestPurgeIsSkippedWhileAnotherProcessPurges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() != store.Postgres {
			t.Skip("SQLite serialises its writers; every purge runs")
		}
		clk := clock.NewFake(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
		old := finished(t, db, clk)
		clk.Advance(31 * 24 * time.Hour)
		p, err := retention.New(db, &retention.Config{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		ran, err := db.WithTryLock(context.Background(), retention.LockName, func(ctx context.Context) error {
			r, err := p.Purge(ctx)
			if err != nil || !r.Skipped || r.Runs != 0 || !exists(t, db, old) {
				t.Errorf("purge while another holds the lock = %+v, %v (run kept: %v); want skipped, nothing deleted", r, err, exists(t, db, old))
			}
			return nil
		})
		if !ran || err != nil {
			t.Fatalf("WithTryLock = %v, %v", ran, err)
		}
		if r, err := p.Purge(context.Background()); err != nil || r.Skipped || r.Runs != 1 || exists(t, db, old) {
			t.Errorf("purge once the lock is free = %+v, %v; want 1 run deleted", r, err)
		}
	})
}
