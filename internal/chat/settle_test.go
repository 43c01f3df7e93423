package chat

import (
	"context"
	"errors"
	"testing"

	"waymark/internal/store"
)

// A decided card is settled once, by the database's key and not only by the
// count a settlement reads first: on PostgreSQL two settlements (the
// decision's job and the recovery of a lost job) can both count none before
// either inserted; the one that commits second records nothing (
// the settle-once rule, DESIGN §6). settleCardTx records the outcome first
// and touches open points only when the key let it in.
func TestACardsOutcomeIsRecordedOnceEvenWhenTwoSettlementsCountedNone(t *testing.T) {
	eachDB(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var id int64
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.QueryRow(ctx, `INSERT INTO conversations (owner_uid, configuration_uid, page_uid, language, status, created_at, updated_at)
				VALUES (2, 1, 1, 0, 'processing', 1, 1) RETURNING id`).Scan(&id)
		}); err != nil {
			t.Fatal(err)
		}
		o := Outcome{Run: "run-1", Outcome: OutcomeSkipped, After: 4, Table: "pages", UID: 1, Fields: []string{"description"}}
		count := func(q store.Querier) int {
			t.Helper()
			var n int
			if err := q.QueryRow(ctx, "SELECT COUNT(*) FROM conversation_outcomes WHERE conversation_id = ? AND run_uuid = ? AND after_message = ?",
				id, o.Run, o.After).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		// settle records o in a transaction of its own and reports whether it did.
		settle := func(o Outcome) bool {
			t.Helper()
			var got bool
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				got, err = addOutcomeTx(ctx, tx, id, o, 1)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return got
		}
		if db.Dialect() == store.Postgres {
			// Both count none, the first inserts and commits, the second
			// inserts after that commit.
			counted, firstCommitted, secondDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
			var second bool
			var secondErr error
			go func() {
				defer close(secondDone)
				secondErr = db.InTx(ctx, func(tx *store.Tx) error {
					if n := count(tx); n != 0 {
						return errors.New("the second counted an outcome before the first committed")
					}
					close(counted)
					<-firstCommitted
					var err error
					second, err = addOutcomeTx(ctx, tx, id, o, 2)
					return err
				})
			}()
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				<-counted
				first, err := addOutcomeTx(ctx, tx, id, o, 1)
				if !first {
					t.Error("the first settlement recorded nothing")
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			close(firstCommitted)
			<-secondDone
			if secondErr != nil || second {
				t.Errorf("the second settlement: recorded %v, %v; want nothing recorded and no error", second, secondErr)
			}
		} else {
			// SQLite runs one write transaction at a time: the second counts
			// the first's outcome, and its insert alone records nothing.
			for i, want := range []bool{true, false} {
				if got := settle(o); got != want {
					t.Errorf("settlement %d recorded %v, want %v", i+1, got, want)
				}
			}
		}
		if n := count(db); n != 1 {
			t.Errorf("%d outcomes of one card, want 1", n)
		}
		// Another card of the run (it came after more messages) is recorded.
		o.After = 6
		if !settle(o) {
			t.Error("the run's next card recorded nothing")
		}
	})
}
