package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

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
			_ = store.SignalAfter(ctx, tx, "k")
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if closed(ch) {
			t.Fatal("a rolled-back transaction woke the watcher")
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			_ = store.SignalAfter(ctx, tx, "k")
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
		_ = store.SignalAfter(ctx, db, "k")
		if !closed(ch2) {
			t.Error("a signal through the handle did not wake the watcher")
		}
	})
}

// On PostgreSQL a signal reaches the watchers of another process on the
// same database (NOTIFY at the commit, the other handle's LISTEN); on
// SQLite it stays in its process.
func TestASignalReachesAnotherProcessOnPostgreSQL(t *testing.T) {
	storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
		ctx := context.Background()
		other := another()
		ch, release := other.Watch("k")
		defer release()
		// The listener connects on the first watch: signal until it hears one.
		deadline := time.Now().Add(10 * time.Second)
		for !closed(ch) {
			if err := db.InTx(ctx, func(tx *store.Tx) error { return store.SignalAfter(ctx, tx, "k") }); err != nil {
				t.Fatal(err)
			}
			if db.Dialect() == store.SQLite {
				time.Sleep(100 * time.Millisecond)
				if closed(ch) {
					t.Fatal("a SQLite signal reached another handle")
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("no signal reached the other process within 10s")
			}
			time.Sleep(20 * time.Millisecond) // polling a condition: the listener is up
		}
	})
}
