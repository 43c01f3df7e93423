package run_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// The queries other packages need of the runs table, answered by its owner:
// the open-runs cap, the inbox's batches and the metrics.
func TestTheRunStoreAnswersTheCountsOtherPackagesNeed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		oldest, err := b.store.OldestQueued(b.ctx)
		if err != nil || !oldest.IsZero() {
			t.Fatalf("OldestQueued on no runs = %v, %v; want the zero time", oldest, err)
		}
		first := b.queued(t)
		b.clk.Advance(time.Second)
		var waiting []string
		for i := 0; i < 3; i++ {
			waiting = append(waiting, b.in(t, run.StatusWaitingForApproval))
			b.clk.Advance(time.Second)
		}
		b.in(t, run.StatusCompleted)

		if n, err := run.CountOpen(b.ctx, db, 7); err != nil || n != 4 {
			t.Errorf("CountOpen(7) = %d, %v; want 4 (one queued, three waiting)", n, err)
		}
		if n, err := run.CountOpen(b.ctx, db, 8); err != nil || n != 0 {
			t.Errorf("CountOpen(8) = %d, %v; want 0", n, err)
		}
		counts, err := b.store.CountByStatus(b.ctx)
		if err != nil || counts[run.StatusQueued] != 1 || counts[run.StatusWaitingForApproval] != 3 ||
			counts[run.StatusCompleted] != 1 || len(counts) != len(run.Statuses()) {
			t.Errorf("CountByStatus = %v, %v", counts, err)
		}
		if oldest, err := b.store.OldestQueued(b.ctx); err != nil || !oldest.Equal(t0) {
			t.Errorf("OldestQueued = %v, %v; want %v (run %s)", oldest, err, t0, first)
		}

		if all, err := b.store.Find(b.ctx, run.FindParams{Limit: 10}); err != nil || len(all) != 5 {
			t.Errorf("Find(no filter) = %d runs, %v; want 5", len(all), err)
		}
		if done, err := b.store.Find(b.ctx, run.FindParams{Status: run.StatusCompleted, From: t0.Add(2 * time.Second), Limit: 10}); err != nil || len(done) != 1 {
			t.Errorf("Find(completed, from t0+2s) = %v, %v; want the completed run", done, err)
		}
		// Newest first, in batches that continue after the last one read.
		page1, err := b.store.Find(b.ctx, run.FindParams{Status: run.StatusWaitingForApproval, Limit: 2})
		if err != nil || len(page1) != 2 {
			t.Fatalf("first batch = %v, %v", page1, err)
		}
		page2, err := b.store.Find(b.ctx, run.FindParams{Status: run.StatusWaitingForApproval, Limit: 2, After: &page1[1]})
		if err != nil || len(page2) != 1 {
			t.Fatalf("second batch = %v, %v", page2, err)
		}
		got := []string{page1[0].UUID, page1[1].UUID, page2[0].UUID}
		want := slices.Clone(waiting)
		slices.Reverse(want)
		if !slices.Equal(got, want) {
			t.Errorf("waiting runs = %v, want newest first %v", got, want)
		}
		if other, err := b.store.Find(b.ctx, run.FindParams{Status: run.StatusWaitingForApproval, Initiator: 8, Limit: 10}); err != nil || len(other) != 0 {
			t.Errorf("waiting runs of initiator 8 = %v, %v; want none", other, err)
		}
	})
}

// The reaper's candidates: queued runs unchanged since a time, oldest first,
// page by page without a run twice or left out (ties on the time included).
func TestQueuedBeforeListsStaleQueuedRunsPageByPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		var stale []string
		for i := 0; i < 5; i++ {
			stale = append(stale, b.queued(t)) // all five at the same time
		}
		b.in(t, run.StatusWaitingForApproval) // not queued
		b.clk.Advance(time.Minute)
		b.queued(t) // too fresh
		var got []string
		var from run.QueuedMark
		for pages := 0; ; pages++ {
			marks, err := b.store.QueuedBefore(b.ctx, t0.Add(time.Second), from, 2)
			if err != nil || pages > 5 {
				t.Fatalf("QueuedBefore page %d = %v, %v", pages, marks, err)
			}
			if len(marks) == 0 {
				break
			}
			for _, m := range marks {
				got = append(got, m.UUID)
			}
			from = marks[len(marks)-1]
		}
		slices.Sort(stale)
		if !slices.Equal(got, stale) {
			t.Fatalf("QueuedBefore pages = %v, want the five stale queued runs %v", got, stale)
		}
	})
}

func TestCreateCappedStoresNothingOnceTheInitiatorHasTheCapOfOpenRuns(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		b.queued(t)
		b.in(t, run.StatusWaitingForApproval)
		b.in(t, run.StatusCompleted) // not open: does not count
		create := func(initiator int64, maxOpen int) (string, bool, error) {
			id := uuid.NewString()
			var won bool
			err := db.InTx(b.ctx, func(tx *store.Tx) error {
				var err error
				won, err = b.store.CreateCappedTx(b.ctx, tx, run.Run{UUID: id, Configuration: 3, Initiator: initiator,
					Status: run.StatusQueued, Request: []byte(`{}`)},
					run.Flush{Events: []run.NewEvent{{Kind: run.EventRequest, Payload: map[string]any{"n": 1}}}, Privacy: run.PrivacyFull}, maxOpen)
				return err
			})
			return id, won, err
		}
		id, won, err := create(7, 2)
		if err != nil || won {
			t.Fatalf("CreateCappedTx(7, cap 2) with two open = %v, %v; want refused", won, err)
		}
		if n := b.count(t, "SELECT COUNT(*) FROM runs WHERE uuid = ?", id); n != 0 {
			t.Errorf("refused run stored: %d rows", n)
		}
		if n := b.count(t, "SELECT COUNT(*) FROM run_events WHERE run_uuid = ?", id); n != 0 {
			t.Errorf("refused run's events stored: %d rows", n)
		}
		id, won, err = create(7, 3)
		if err != nil || !won {
			t.Fatalf("CreateCappedTx(7, cap 3) with two open = %v, %v; want stored", won, err)
		}
		if r := b.get(t, id); r.Status != run.StatusQueued || r.Initiator != 7 {
			t.Errorf("stored run = %+v", r)
		}
		if evs, err := b.store.Events(b.ctx, id, 0, 0); err != nil || len(evs) != 1 || evs[0].Sequence != 1 {
			t.Errorf("events of the stored run = %+v, %v; want the request at 1", evs, err)
		}
		if _, won, err := create(8, 1); err != nil || !won {
			t.Errorf("CreateCappedTx(8, cap 1) with none open = %v, %v; want stored", won, err)
		}
		if _, won, err := create(8, 0); err == nil || won {
			t.Errorf("CreateCappedTx(cap 0) = %v, %v; want an error", won, err)
		}
	})
}
