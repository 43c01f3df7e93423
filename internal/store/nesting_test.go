package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// finishes runs fn and fails the test when it has not returned within the
// deadline: the bug it guards against is a silent deadlock.
func finishes(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return within 20s: a deadlock", what)
		return nil
	}
}

// Regression: a write through the database handle inside an InTx callback
// waited for the lock its own caller held — a silent deadlock on SQLite,
// unseen on PostgreSQL. With nesting checked (as in every test database) it
// is ErrNestedTx on both, and the transaction rolls back.
func TestAWriteThroughTheHandleInsideATransactionIsErrNestedTx(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		nested := map[string]func() error{
			"Exec": func() error {
				_, err := db.Exec(ctx, `INSERT INTO be_groups (uid, title) VALUES (961, 'nested')`)
				return err
			},
			"InTx": func() error {
				return db.InTx(ctx, func(tx *store.Tx) error {
					_, err := tx.Exec(ctx, `INSERT INTO be_groups (uid, title) VALUES (961, 'nested')`)
					return err
				})
			},
			"InSQLTx": func() error {
				return db.InSQLTx(ctx, func(tx *store.Tx) error { return nil })
			},
		}
		for name, call := range nested {
			err := finishes(t, "nested "+name, func() error {
				return db.InTx(ctx, func(tx *store.Tx) error {
					if _, err := tx.Exec(ctx, `INSERT INTO be_groups (uid, title) VALUES (960, 'outer')`); err != nil {
						return err
					}
					return call()
				})
			})
			if !errors.Is(err, store.ErrNestedTx) {
				t.Errorf("%s inside InTx = %v, want ErrNestedTx", name, err)
			}
			var n int
			if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM be_groups WHERE uid IN (960, 961)").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("after the refused %s %d rows are stored, want the transaction rolled back", name, n)
			}
		}
		// Other goroutines still wait their turn: only the holder is refused.
		release := make(chan struct{})
		inside := make(chan struct{})
		outer := make(chan error, 1)
		go func() {
			outer <- db.InTx(ctx, func(tx *store.Tx) error {
				close(inside)
				<-release
				_, err := tx.Exec(ctx, `INSERT INTO be_groups (uid, title) VALUES (962, 'first')`)
				return err
			})
		}()
		<-inside
		other := make(chan error, 1)
		go func() {
			_, err := db.Exec(ctx, `INSERT INTO be_groups (uid, title) VALUES (963, 'second')`)
			other <- err
		}()
		close(release)
		if err := <-outer; err != nil {
			t.Fatalf("outer transaction: %v", err)
		}
		if err := finishes(t, "a concurrent Exec", func() error { return <-other }); err != nil {
			t.Errorf("a concurrent Exec = %v, want it to wait and succeed", err)
		}
	})
}
