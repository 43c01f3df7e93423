package store_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// skipWithoutFastPaths skips a test of a fast path's mechanism when the
// environment turned them off (WAYMARK_STORE_NO_FAST_PATHS=1).
func skipWithoutFastPaths(t *testing.T, db *store.DB) {
	t.Helper()
	if !db.FastPaths() {
		t.Skipf("%s=1: the fast paths are off", store.EnvNoFastPaths)
	}
}

// With NoFastPaths every fast path of doc.go is off and the answers are the
// same: a read scope reads live, a GenCache loads each time, a settings
// scope keeps no generation, InTx's
// transaction is a database/sql one.
func TestNoFastPathsTurnsEveryFastPathOff(t *testing.T) {
	ctx := context.Background()
	db, err := store.OpenConfig(ctx, "sqlite:"+filepath.Join(t.TempDir(), "slow.db"), &store.Config{NoFastPaths: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if db.FastPaths() {
		t.Fatal("FastPaths() = true with NoFastPaths")
	}
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
		t.Errorf("scope read = %q, want after (no snapshot)", got)
	}
	c := store.NewGenCache[string, string]("be_groups")
	loads := 0
	for i := 0; i < 3; i++ {
		if _, err := c.Get(ctx, db, "k", func(context.Context, store.Querier) (string, error) { loads++; return "v", nil }); err != nil {
			t.Fatal(err)
		}
	}
	if loads != 3 {
		t.Errorf("GenCache loads = %d, want 3 (nothing kept)", loads)
	}
	gctx, endSettings := db.SettingsScope(ctx)
	before := db.Statements()
	for range 2 {
		if _, err := store.Generation(gctx, db); err != nil {
			t.Fatal(err)
		}
	}
	endSettings()
	if n := db.Statements() - before; n != 2 {
		t.Errorf("two generation reads under a settings scope ran %d statements, want 2 (nothing kept)", n)
	}
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		if tx.SQL == nil {
			t.Error("InTx without a database/sql transaction")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// The generation trigger check is derived from the registered tables: a
// registered table without triggers is reported for each change, and no
// longer once its triggers exist.
func TestMissingGenerationTriggersNamesARegisteredTableWithoutThem(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if _, err := db.Exec(ctx, `CREATE TABLE gen_probe (id BIGINT PRIMARY KEY)`); err != nil {
			t.Fatal(err)
		}
		store.GenerationTables("gen_probe")
		missing, err := store.MissingGenerationTriggers(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"gen_probe INSERT", "gen_probe UPDATE", "gen_probe DELETE"}
		if !slices.Equal(missing, want) {
			t.Fatalf("missing = %q, want %q", missing, want)
		}
		var stmts []string
		if db.Dialect() == store.SQLite {
			for _, ev := range []string{"INSERT", "UPDATE", "DELETE"} {
				stmts = append(stmts, `CREATE TRIGGER gen_probe_`+ev+` AFTER `+ev+` ON gen_probe
					BEGIN UPDATE access_generation SET gen = gen + 1 WHERE id = 1; END`)
			}
		} else {
			stmts = append(stmts, `CREATE TRIGGER gen_probe_gen AFTER INSERT OR UPDATE OR DELETE ON gen_probe
				FOR EACH STATEMENT EXECUTE FUNCTION be_groups_bump_generation()`)
		}
		for _, q := range stmts {
			if _, err := db.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if missing, err := store.MissingGenerationTriggers(ctx, db); err != nil || len(missing) != 0 {
			t.Errorf("with triggers missing = %q, %v; want none", missing, err)
		}
	})
}
