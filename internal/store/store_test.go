package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

func TestRebind(t *testing.T) {
	cases := []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"a = ? AND b = ?", "a = $1 AND b = $2"},
		{"a = '?' AND b = ?", "a = '?' AND b = $1"},
	}
	for _, c := range cases {
		if got := store.Rebind(store.Postgres, c.in); got != c.want {
			t.Errorf("Rebind(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := store.Rebind(store.SQLite, c.in); got != c.in {
			t.Errorf("Rebind sqlite changed %q to %q", c.in, got)
		}
	}
}

func TestParseURLRejectsBadValues(t *testing.T) {
	for _, raw := range []string{"", "mysql://x", "sqlite:", "postgres://", "postgres://%zz"} {
		if _, err := store.ParseURL(raw); !errors.Is(err, store.ErrBadURL) {
			t.Errorf("ParseURL(%q) = %v, want ErrBadURL", raw, err)
		}
	}
	if _, err := store.ParseURL("postgres://u:secret@[::1"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("ParseURL leaked or accepted: %v", err)
	}
}

func TestOpenUnreachablePostgresFailsFastNamingTheAddress(t *testing.T) {
	start := time.Now()
	_, err := store.Open(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	if err == nil {
		t.Fatal("Open of an unreachable server succeeded")
	}
	if !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("error %q does not name the address", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Open took %v, want under 10s", d)
	}
}

func TestMigrateIsIdempotentAndCurrent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("second Migrate: %v", err)
		}
		ok, err := db.MigrationsCurrent(ctx)
		if err != nil || !ok {
			t.Fatalf("MigrationsCurrent = %v, %v; want true", ok, err)
		}
	})
}

func TestInTxRollsBackOnError(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		boom := errors.New("boom")
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.Exec(ctx, "INSERT INTO languages (uid, title, locale) VALUES (?, ?, ?)", 5, "X", "x"); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("InTx = %v, want boom", err)
		}
		var n int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM languages").Scan(&n); err != nil || n != 0 {
			t.Fatalf("rows after rollback = %d, %v; want 0", n, err)
		}
	})
}

func TestBooleansAndTimesRoundTrip(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().Truncate(time.Microsecond).UTC()
		if _, err := db.Exec(ctx, "INSERT INTO records (tbl, uid, deleted, updated_at) VALUES (?, ?, ?, ?)", "pages", 1, true, store.Micros(now)); err != nil {
			t.Fatal(err)
		}
		var deleted bool
		var at int64
		if err := db.QueryRow(ctx, "SELECT deleted, updated_at FROM records WHERE tbl = ? AND uid = ? AND deleted = TRUE", "pages", 1).Scan(&deleted, &at); err != nil {
			t.Fatal(err)
		}
		if !deleted || !store.Time(at).Equal(now) {
			t.Errorf("got deleted=%v at=%v, want true %v", deleted, store.Time(at), now)
		}
	})
}

// A failed transaction leaves nothing behind, not even on its connection:
// every later transaction of the pool begins cleanly and sees only what
// committed. InTx on SQLite runs without a database/sql transaction;
// InSQLTx always has one (for the job queue).
func TestFailedTransactionsLeaveThePoolClean(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if _, err := db.Exec(ctx, "CREATE TABLE pool_probe (v BIGINT NOT NULL)"); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		for i := 0; i < 20; i++ {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				if (tx.SQL == nil) != (db.Dialect() == store.SQLite && db.FastPaths()) {
					t.Fatalf("InTx on %s: SQL set = %v", db.Dialect(), tx.SQL != nil)
				}
				if _, err := tx.Exec(ctx, "INSERT INTO pool_probe (v) VALUES (?)", i); err != nil {
					return err
				}
				if i%2 == 0 {
					return boom
				}
				return nil
			})
			if (i%2 == 0) != errors.Is(err, boom) || (i%2 == 1 && err != nil) {
				t.Fatalf("transaction %d: %v", i, err)
			}
		}
		if err := db.InSQLTx(ctx, func(tx *store.Tx) error {
			if tx.SQL == nil {
				t.Fatal("InSQLTx without a database/sql transaction")
			}
			_, err := tx.Exec(ctx, "INSERT INTO pool_probe (v) VALUES (?)", 100)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		var n, sum int
		if err := db.QueryRow(ctx, "SELECT COUNT(*), SUM(v) FROM pool_probe").Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		if n != 11 || sum != 1+3+5+7+9+11+13+15+17+19+100 {
			t.Errorf("rows = %d, sum = %d; want the 10 committed and the InSQLTx one", n, sum)
		}
	})
}
