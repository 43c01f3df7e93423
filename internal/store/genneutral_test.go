package store_test

import (
	"context"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// On SQLite a transaction whose writes cannot move the settings generation
// hands the generation it read (the one at its commit: it held the write
// lock) to the settings scope, so the next read under the scope costs no
// statement; a write to a settings table, a write whose trigger writes one,
// and a DELETE hand nothing over, and the next read sees the moved
// generation.
func TestATransactionThatCannotMoveTheGenerationHandsItToTheSettingsScope(t *testing.T) {
	db := storetest.SQLite(t)
	skipWithoutFastPaths(t, db)
	bg := context.Background()
	for _, q := range []string{
		`CREATE TABLE neutral_notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`,
		`CREATE TABLE chained_notes (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`,
		// A trigger that writes a settings table: a write here moves the generation too.
		`CREATE TRIGGER chained_notes_setting AFTER INSERT ON chained_notes
		BEGIN
			INSERT INTO tool_settings (name, enabled) VALUES (NEW.name, TRUE);
		END`,
	} {
		if _, err := db.Exec(bg, q); err != nil {
			t.Fatal(err)
		}
	}
	gen := func(ctx context.Context) int64 {
		t.Helper()
		g, err := store.Generation(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	inTx := func(ctx context.Context, q string) int64 {
		t.Helper()
		var read int64
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			if read, err = store.Generation(ctx, tx); err != nil {
				return err
			}
			_, err = tx.Exec(ctx, q)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return read
	}

	ctx, end := db.SettingsScope(bg)
	defer end()
	read := inTx(ctx, `INSERT INTO neutral_notes (body) VALUES ('a')`)
	before := db.Statements()
	if g := gen(ctx); g != read {
		t.Errorf("after a neutral write the scope answers generation %d, want the transaction's %d", g, read)
	}
	if n := db.Statements() - before; n != 0 {
		t.Errorf("the generation read after a neutral write ran %d statements, want 0 (handed over)", n)
	}

	for _, c := range []struct{ name, q string }{
		{"a settings table", `INSERT INTO tool_settings (name, enabled) VALUES ('direct', TRUE)`},
		{"a table whose trigger writes a settings table", `INSERT INTO chained_notes (name) VALUES ('chained')`},
	} {
		read := inTx(ctx, c.q)
		before := db.Statements()
		g := gen(ctx)
		if g <= read {
			t.Errorf("after a write to %s the scope answers generation %d, want above the %d read before it", c.name, g, read)
		}
		if n := db.Statements() - before; n != 1 {
			t.Errorf("the generation read after a write to %s ran %d statements, want 1 (read again)", c.name, n)
		}
	}

	// A DELETE counts as moving it (a cascade or a trigger may act), whatever the table.
	inTx(ctx, `DELETE FROM neutral_notes`)
	before = db.Statements()
	gen(ctx)
	if n := db.Statements() - before; n != 1 {
		t.Errorf("the generation read after a DELETE ran %d statements, want 1 (read again)", n)
	}

	// A trigger added later, through the store, is seen: neutral_notes now
	// moves the generation, and nothing is handed over after a write to it.
	if _, err := db.Exec(bg, `CREATE TRIGGER neutral_notes_setting AFTER INSERT ON neutral_notes
		BEGIN
			UPDATE access_generation SET gen = gen + 1 WHERE id = 1;
		END`); err != nil {
		t.Fatal(err)
	}
	read = inTx(ctx, `INSERT INTO neutral_notes (body) VALUES ('b')`)
	if g := gen(ctx); g <= read {
		t.Errorf("after a write to a table with a new generation trigger the scope answers %d, want above %d", g, read)
	}

	// Without a scope nothing is kept: the read after a neutral write reads.
	inTx(bg, `INSERT INTO chained_notes (name) VALUES ('x')`) // moves it
	before = db.Statements()
	gen(bg)
	if n := db.Statements() - before; n != 1 {
		t.Errorf("a generation read outside a scope ran %d statements, want 1", n)
	}
}
