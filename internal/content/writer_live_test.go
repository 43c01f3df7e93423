package content_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// TestWriteReadsUserAsStoredNow: the writer asks the Checker inside its
// transaction, so a user demoted between two writes is refused the second.
func TestWriteReadsUserAsStoredNow(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ctx := context.Background()
		req := content.WriteRequest{Table: "tt_content", UID: ceText, User: editor, Fields: map[string]string{"header": "First"}}
		if _, err := b.writer.Write(ctx, req); err != nil {
			t.Fatalf("first Write: %v", err)
		}
		if _, err := db.Exec(ctx, "UPDATE be_groups SET tables_modify = '[\"pages\"]' WHERE uid = 1"); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, db)
		req.Fields = map[string]string{"header": "Second"}
		if _, err := b.writer.Write(ctx, req); !errors.Is(err, access.ErrDenied) {
			t.Fatalf("Write after the demotion = %v, want ErrDenied", err)
		}
		if after := snapshot(t, db); after != before {
			t.Errorf("a refused write changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
		}
		if f := fieldsOf(t, db, "tt_content", ceText); f["header"] != "First" {
			t.Errorf("header = %q, want First", f["header"])
		}
	})
}

// TestConcurrentWritesToOneRecordKeepBothChanges is the regression test for
// a lost update on PostgreSQL: a write read the record's fields without a
// lock, waited for a concurrent write of another field, then stored its stale
// copy over it, so the first change vanished while its history row stayed.
func TestConcurrentWritesToOneRecordKeepBothChanges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		second := make(chan error, 1)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := b.writer.WriteTx(ctx, tx, content.WriteRequest{Table: "tt_content", UID: ceText, User: editor,
				Fields: map[string]string{"header": "From the first"}}); err != nil {
				return err
			}
			go func() {
				_, err := b.writer.Write(ctx, content.WriteRequest{Table: "tt_content", UID: ceText, User: editor,
					Fields: map[string]string{"bodytext": "From the second"}})
				second <- err
			}()
			if db.Dialect() == store.Postgres {
				return waitBlockedBy(ctx, db, tx)
			}
			return nil // SQLite: the second write waits for the write lock at BEGIN
		})
		if err != nil {
			t.Fatalf("first write: %v", err)
		}
		if err := <-second; err != nil {
			t.Fatalf("second write: %v", err)
		}
		f := fieldsOf(t, db, "tt_content", ceText)
		if f["header"] != "From the first" || f["bodytext"] != "From the second" {
			t.Errorf("fields = %v, want both writes kept", f)
		}
		if h := history(t, db, "tt_content", ceText); len(h) != 2 {
			t.Errorf("history = %+v, want two rows", h)
		}
	})
}

// waitBlockedBy waits until another PostgreSQL session waits for a lock held by tx.
func waitBlockedBy(ctx context.Context, db *store.DB, tx *store.Tx) error {
	var pid int64
	if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		return err
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		var n int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM pg_stat_activity WHERE CAST(? AS INTEGER) = ANY(pg_blocking_pids(pid))", pid).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.New("the second write never waited for the first")
		case <-tick.C:
		}
	}
}
