package store_test

import (
	"context"
	"errors"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A signal sent inside a transaction (SignalAfter) wakes the key's
// watchers once the transaction committed, never when it rolled back; a
// statement of the handle signals at once; other keys stay asleep; a
// released watch leaves nothing behind.
func TestSignalAfterWakesWatchersOnlyOnCommit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ch, release := db.Watch("k")
		other, releaseOther := db.Watch("other")
		defer releaseOther()
		boom := errors.New("boom")
		err := db.InTx(ctx, func(tx *store.Tx) error {
			store.SignalAfter(tx, "k")
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if closed(ch) {
			t.Fatal("a rolled-back transaction woke the watcher")
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			store.SignalAfter(tx, "k")
			if closed(ch) {
				t.Error("the watcher woke before the commit")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !closed(ch) {
			t.Fatal("a committed transaction did not wake the watcher")
		}
		if closed(other) {
			t.Error("another key's watcher woke")
		}
		release()
		if n := db.Watchers("k"); n != 0 {
			t.Errorf("%d watchers of k after the release, want 0", n)
		}
		ch2, release2 := db.Watch("k")
		defer release2()
		if closed(ch2) {
			t.Fatal("a new watch starts closed")
		}
		store.SignalAfter(db, "k")
		if !closed(ch2) {
			t.Error("a signal through the handle did not wake the watcher")
		}
	})
}
