package store_test

import (
	"context"
	"errors"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// Each settings table moves the generation on insert, update and delete, so
// nothing kept in a GenCache outlives a committed change.
func TestEveryChangeOfASettingsTableMovesTheGeneration(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		changes := map[string][]string{
			"be_users": {
				`INSERT INTO be_users (uid, username, password_hash) VALUES (900, 'gen', '')`,
				`UPDATE be_users SET disabled = TRUE WHERE uid = 900`,
				`DELETE FROM be_users WHERE uid = 900`},
			"be_groups": {
				`INSERT INTO be_groups (uid, title) VALUES (900, 'gen')`,
				`UPDATE be_groups SET title = 'gen2' WHERE uid = 900`,
				`DELETE FROM be_groups WHERE uid = 900`},
			"schema_tables": {
				`INSERT INTO schema_tables (name, definition) VALUES ('gen', '{}')`,
				`UPDATE schema_tables SET definition = '{"fields":[]}' WHERE name = 'gen'`,
				`DELETE FROM schema_tables WHERE name = 'gen'`},
			"tool_settings": {
				`INSERT INTO tool_settings (name, enabled) VALUES ('gen', TRUE)`,
				`UPDATE tool_settings SET enabled = FALSE WHERE name = 'gen'`,
				`DELETE FROM tool_settings WHERE name = 'gen'`},
			"languages": {
				`INSERT INTO languages (uid, title, locale) VALUES (900, 'Gen', 'xx')`,
				`UPDATE languages SET title = 'Gen2' WHERE uid = 900`,
				`DELETE FROM languages WHERE uid = 900`},
			"skills": {
				`INSERT INTO skills (uid, source_uid, identifier, name, digest) VALUES (900, 900, 'gen', 'Gen', 'd')`,
				`UPDATE skills SET name = 'Gen2' WHERE uid = 900`,
				`DELETE FROM skills WHERE uid = 900`},
			"configurations": {
				`INSERT INTO configurations (uid, identifier, provider_type, context_window) VALUES (900, 'gen', 'script', 1000)`,
				`UPDATE configurations SET active = TRUE WHERE uid = 900`,
				`DELETE FROM configurations WHERE uid = 900`},
		}
		// A skill needs its source (not a settings table).
		if _, err := db.Exec(ctx, `INSERT INTO skill_sources (uid, type, title, path, trust_level) VALUES (900, 'directory', 'gen', '/gen', 'verified')`); err != nil {
			t.Fatal(err)
		}
		for table, stmts := range changes {
			for _, q := range stmts {
				before, err := store.Generation(ctx, db)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				after, err := store.Generation(ctx, db)
				if err != nil {
					t.Fatal(err)
				}
				if after <= before {
					t.Errorf("%s: %q left the generation at %d", table, q, after)
				}
			}
		}
	})
}

func TestGenCacheAnswersFromMemoryUntilTheGenerationMoves(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		skipWithoutFastPaths(t, db)
		ctx := context.Background()
		c := store.NewGenCache[string, string]("be_groups")
		loads := 0
		load := func(ctx context.Context, q store.Querier) (string, error) {
			loads++
			var title string
			err := q.QueryRow(ctx, "SELECT title FROM be_groups WHERE uid = 901").Scan(&title)
			return title, err
		}
		if _, err := db.Exec(ctx, `INSERT INTO be_groups (uid, title) VALUES (901, 'one')`); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			if v, err := c.Get(ctx, db, "k", load); err != nil || v != "one" {
				t.Fatalf("Get = %q, %v", v, err)
			}
		}
		if loads != 1 {
			t.Errorf("loads = %d, want 1 while the generation stands", loads)
		}
		if _, err := db.Exec(ctx, `UPDATE be_groups SET title = 'two' WHERE uid = 901`); err != nil {
			t.Fatal(err)
		}
		if v, err := c.Get(ctx, db, "k", load); err != nil || v != "two" {
			t.Fatalf("after the change Get = %q, %v, want two", v, err)
		}
		if loads != 2 {
			t.Errorf("loads = %d, want 2", loads)
		}
	})
}

// A value read inside a transaction that changed the settings and rolled
// back must not be served afterwards, even when a later commit reaches the
// same generation number.
func TestGenCacheKeepsNothingLoadedInsideATransaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		c := store.NewGenCache[string, string]("be_groups")
		load := func(ctx context.Context, q store.Querier) (string, error) {
			var title string
			err := q.QueryRow(ctx, "SELECT title FROM be_groups WHERE uid = 902").Scan(&title)
			return title, err
		}
		if _, err := db.Exec(ctx, `INSERT INTO be_groups (uid, title) VALUES (902, 'kept')`); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("roll back")
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.Exec(ctx, `UPDATE be_groups SET title = 'rolled back' WHERE uid = 902`); err != nil {
				return err
			}
			if v, err := c.Get(ctx, tx, "k", load); err != nil || v != "rolled back" {
				t.Errorf("inside the transaction Get = %q, %v", v, err)
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, `UPDATE be_groups SET title = 'committed' WHERE uid = 902`); err != nil {
			t.Fatal(err)
		}
		if v, err := c.Get(ctx, db, "k", load); err != nil || v != "committed" {
			t.Errorf("after rollback and commit Get = %q, %v, want committed", v, err)
		}
	})
}

// A transaction reads the generation once, and again after each statement
// that may have written: its own change of a settings table is seen at once
// (Exec, and an UPDATE … RETURNING run as a query).
func TestATransactionRereadsTheGenerationOnlyAfterItWrites(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		skipWithoutFastPaths(t, db)
		ctx := context.Background()
		err := db.InTx(ctx, func(tx *store.Tx) error {
			g0, err := store.Generation(ctx, tx)
			if err != nil {
				return err
			}
			stmts0 := db.Statements()
			if g, err := store.Generation(ctx, tx); err != nil || g != g0 {
				t.Errorf("second read = %d, %v; want %d", g, err, g0)
			}
			if n := db.Statements() - stmts0; n != 0 {
				t.Errorf("second read ran %d statements, want 0", n)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO be_groups (uid, title) VALUES (902, 'tx')`); err != nil {
				return err
			}
			g1, err := store.Generation(ctx, tx)
			if err != nil {
				return err
			}
			if g1 <= g0 {
				t.Errorf("after the insert the generation is %d, was %d", g1, g0)
			}
			var title string
			if err := tx.QueryRow(ctx, `UPDATE be_groups SET title = 'tx2' WHERE uid = 902 RETURNING title`).Scan(&title); err != nil {
				return err
			}
			if g2, err := store.Generation(ctx, tx); err != nil || g2 <= g1 {
				t.Errorf("after UPDATE … RETURNING the generation is %d (%v), was %d", g2, err, g1)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
