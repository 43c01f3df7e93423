package store_test

import (
	"context"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func title(t *testing.T, ctx context.Context, db *store.DB) string {
	t.Helper()
	var s string
	if err := db.QueryRow(ctx, "SELECT title FROM be_groups WHERE uid = 950").Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// On SQLite the reads of a scope see one snapshot: a change committed after
// the scope's first read shows only once the scope ended.
func TestReadScopeReadsOneSnapshotUntilItEnds(t *testing.T) {
	db := storetest.SQLite(t)
	skipWithoutFastPaths(t, db)
	ctx := context.Background()
	if _, err := db.Exec(ctx, `INSERT INTO be_groups (uid, title) VALUES (950, 'before')`); err != nil {
		t.Fatal(err)
	}
	sctx, end := db.ReadScope(ctx)
	if got := title(t, sctx, db); got != "before" {
		t.Fatalf("first read = %q", got)
	}
	gen0, err := store.Generation(sctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `UPDATE be_groups SET title = 'after' WHERE uid = 950`); err != nil {
		t.Fatal(err)
	}
	if got := title(t, sctx, db); got != "before" {
		t.Errorf("read in the scope after a commit elsewhere = %q, want the scope's snapshot", got)
	}
	if gen, _ := store.Generation(sctx, db); gen != gen0 {
		t.Errorf("generation moved inside the scope: %d → %d", gen0, gen)
	}
	inner, endInner := db.ReadScope(sctx) // nested: the outer scope ends it
	if got := title(t, inner, db); got != "before" {
		t.Errorf("nested scope read %q", got)
	}
	endInner()
	if got := title(t, sctx, db); got != "before" {
		t.Errorf("after the nested end the scope read %q", got)
	}
	end()
	if got := title(t, sctx, db); got != "after" {
		t.Errorf("read after the end = %q, want after", got)
	}
	if got := title(t, ctx, db); got != "after" {
		t.Errorf("read outside = %q", got)
	}
	end() // a second end is harmless
}

// On PostgreSQL a scope takes no snapshot: every read sees the latest
// commit; only the settings generation is read once (a settings scope).
func TestReadScopeOnPostgresReadsLive(t *testing.T) {
	db := storetest.Postgres(t)
	ctx := context.Background()
	if _, err := db.Exec(ctx, `INSERT INTO be_groups (uid, title) VALUES (950, 'before')`); err != nil {
		t.Fatal(err)
	}
	sctx, end := db.ReadScope(ctx)
	defer end()
	_ = title(t, sctx, db)
	if _, err := db.Exec(ctx, `UPDATE be_groups SET title = 'after' WHERE uid = 950`); err != nil {
		t.Fatal(err)
	}
	if got := title(t, sctx, db); got != "after" {
		t.Errorf("read = %q, want after", got)
	}
	skipWithoutFastPaths(t, db)
	first, err := store.Generation(sctx, db)
	if err != nil {
		t.Fatal(err)
	}
	before := db.Statements()
	if g, err := store.Generation(sctx, db); err != nil || g != first {
		t.Fatalf("second generation read under the scope = %d, %v; want %d", g, err, first)
	}
	if n := db.Statements() - before; n != 0 {
		t.Errorf("a second generation read under the scope ran %d statements, want 0", n)
	}
}

// Regression: a read scope kept serving its snapshot after a write through
// the handle under it, so the reader did not see its own write. A write
// (Exec or InTx) under the scope ends the snapshot's use: later reads and
// the generation are current.
func TestAReadScopeNeverServesAReadAfterItsOwnWrite(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if _, err := db.Exec(ctx, `INSERT INTO be_groups (uid, title) VALUES (950, 'before')`); err != nil {
			t.Fatal(err)
		}
		sctx, end := db.ReadScope(ctx)
		defer end()
		if got := title(t, sctx, db); got != "before" {
			t.Fatalf("first read = %q", got)
		}
		gen0, err := store.Generation(sctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(sctx, `UPDATE be_groups SET title = 'exec' WHERE uid = 950`); err != nil {
			t.Fatal(err)
		}
		if got := title(t, sctx, db); got != "exec" {
			t.Errorf("read after an Exec in the scope = %q, want exec", got)
		}
		gen1, err := store.Generation(sctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if gen1 <= gen0 {
			t.Errorf("generation after the write = %d, was %d: want it moved", gen1, gen0)
		}
		if err := db.InTx(sctx, func(tx *store.Tx) error {
			_, err := tx.Exec(sctx, `UPDATE be_groups SET title = 'intx' WHERE uid = 950`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if got := title(t, sctx, db); got != "intx" {
			t.Errorf("read after an InTx in the scope = %q, want intx", got)
		}
	})
}
