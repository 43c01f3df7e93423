package run_test

import (
	"testing"
	"time"

	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestPurgeDeletesOldFinishedAndLongWaitingRunsWithTheirEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		const day = 24 * time.Hour
		// At t0: runs that will be old by the purge.
		oldDone, oldFailed, oldCancelled := b.in(t, run.StatusCompleted), b.in(t, run.StatusFailed), b.in(t, run.StatusCancelled)
		oldWaiting, oldQueued, oldRunning := b.in(t, run.StatusWaitingForApproval), b.in(t, run.StatusQueued), b.in(t, run.StatusRunning)
		// 60 days later: a waiting run inside its 90-day window, a recent finished one.
		b.clk.Advance(60 * day)
		midWaiting := b.in(t, run.StatusWaitingForInput)
		b.clk.Advance(35 * day)
		newDone := b.in(t, run.StatusCompleted)
		all := []string{oldDone, oldFailed, oldCancelled, oldWaiting, oldQueued, oldRunning, midWaiting, newDone}
		for _, id := range all {
			if _, err := b.store.AppendEvent(b.ctx, id, run.EventStatus, map[string]any{"status": "x"}, run.PrivacyMetadata); err != nil {
				t.Fatal(err)
			}
		}
		now := b.clk.Now()
		n, err := b.store.Purge(b.ctx, now.Add(-30*day), now.Add(-90*day))
		if err != nil {
			t.Fatalf("Purge: %v", err)
		}
		gone := map[string]bool{oldDone: true, oldFailed: true, oldCancelled: true, oldWaiting: true}
		if n != len(gone) {
			t.Errorf("Purge deleted %d runs, want %d", n, len(gone))
		}
		for _, id := range all {
			runs := b.count(t, "SELECT COUNT(*) FROM runs WHERE uuid = ?", id)
			events := b.count(t, "SELECT COUNT(*) FROM run_events WHERE run_uuid = ?", id)
			if gone[id] && (runs != 0 || events != 0) {
				t.Errorf("run %s should be purged: %d rows, %d events left", id, runs, events)
			}
			if !gone[id] && (runs != 1 || events != 1) {
				t.Errorf("run %s should stay: %d rows, %d events", id, runs, events)
			}
		}
		if n, err := b.store.Purge(b.ctx, time.Time{}, time.Time{}); err != nil || n != 0 {
			t.Errorf("Purge with zero times = %d, %v; want 0", n, err)
		}
	})
}
