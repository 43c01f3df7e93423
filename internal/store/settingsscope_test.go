package store_test

import (
	"context"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// A settings scope reads the generation once for all the GenCache lookups of
// its stretch of code, sees a settings change it writes itself at once, and
// sees one committed by others from the next scope on.
func TestASettingsScopeReadsTheGenerationOnceAndSeesItsOwnWrites(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		skipWithoutFastPaths(t, db)
		gen := func(ctx context.Context) int64 {
			t.Helper()
			g, err := store.Generation(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			return g
		}
		ctx, end := db.SettingsScope(context.Background())
		defer end()
		first := gen(ctx)
		before := db.Statements()
		for range 5 {
			if g := gen(ctx); g != first {
				t.Fatalf("generation under the scope = %d, want the kept %d", g, first)
			}
		}
		if n := db.Statements() - before; n != 0 {
			t.Errorf("five generation reads under a scope ran %d statements, want 0", n)
		}

		// Its own write: the next read under the scope sees the moved generation.
		if _, err := db.Exec(ctx, `INSERT INTO tool_settings (name, enabled) VALUES ('scope', TRUE)`); err != nil {
			t.Fatal(err)
		}
		afterExec := gen(ctx)
		if afterExec <= first {
			t.Errorf("after its own Exec the scope reads generation %d, want above %d", afterExec, first)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE tool_settings SET enabled = FALSE WHERE name = 'scope'`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		afterTx := gen(ctx)
		if afterTx <= afterExec {
			t.Errorf("after its own InTx the scope reads generation %d, want above %d", afterTx, afterExec)
		}

		// A change committed outside the scope: the scope keeps its
		// generation, a new scope and a read outside any see the change.
		if _, err := db.Exec(context.Background(), `DELETE FROM tool_settings WHERE name = 'scope'`); err != nil {
			t.Fatal(err)
		}
		if g := gen(ctx); g != afterTx {
			t.Errorf("a scope read %d after a change elsewhere, want its kept %d", g, afterTx)
		}
		if g := gen(context.Background()); g <= afterTx {
			t.Errorf("outside the scope the generation is %d, want above %d", g, afterTx)
		}
		next, endNext := db.SettingsScope(context.Background())
		defer endNext()
		if g := gen(next); g <= afterTx {
			t.Errorf("a new scope reads %d, want above %d", g, afterTx)
		}

		// Ended, it keeps nothing: every read goes to the database.
		end()
		before = db.Statements()
		gen(ctx)
		gen(ctx)
		if n := db.Statements() - before; n != 2 {
			t.Errorf("two reads under an ended scope ran %d statements, want 2", n)
		}
	})
}

// A scope opened under another is the outer one: ending the inner keeps the
// outer's generation.
func TestASettingsScopeInsideAnotherIsTheOuterOne(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		skipWithoutFastPaths(t, db)
		outer, endOuter := db.SettingsScope(context.Background())
		defer endOuter()
		if _, err := store.Generation(outer, db); err != nil {
			t.Fatal(err)
		}
		inner, endInner := db.SettingsScope(outer)
		endInner()
		before := db.Statements()
		if _, err := store.Generation(inner, db); err != nil {
			t.Fatal(err)
		}
		if n := db.Statements() - before; n != 0 {
			t.Errorf("a read after the inner scope ended ran %d statements, want 0 (the outer keeps it)", n)
		}
	})
}
