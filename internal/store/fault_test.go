package store_test

import (
	"context"
	"errors"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// A Fault armed with n fails exactly the n-th call the
// application makes through DB and Tx — a statement, a transaction's begin
// or its commit — with ErrInjected, on both dialects; what the failed call
// would have written is not there (a failed commit rolls back and says
// "state unknown"); the calls before and after it run as usual; armed with 0
// it only counts.
func TestAFaultFailsExactlyTheNthCallAndNothingElse(t *testing.T) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			f := &store.Fault{}
			db := storetest.OpenWith(t, d, func(c *store.Config) { c.Fault = f })
			ctx := context.Background()
			if _, err := db.Exec(ctx, "CREATE TABLE fault_probe (id INTEGER PRIMARY KEY, step TEXT NOT NULL)"); err != nil {
				t.Fatal(err)
			}
			// steps runs one call per step and stops at the first error.
			steps := func() (int, error) {
				done := 0
				step := func(err error) error {
					if err == nil {
						done++
					}
					return err
				}
				if err := step(exec(ctx, db, "DELETE FROM fault_probe")); err != nil {
					return done, err
				}
				var n int
				if err := step(db.QueryRow(ctx, "SELECT COUNT(*) FROM fault_probe").Scan(&n)); err != nil {
					return done, err
				}
				rows, err := db.Query(ctx, "SELECT id FROM fault_probe")
				if err := step(err); err != nil {
					return done, err
				}
				rows.Close()
				err = db.InTx(ctx, func(tx *store.Tx) error { // begin: one call
					done++
					if _, err := tx.Exec(ctx, "INSERT INTO fault_probe (id, step) VALUES (1, 'tx')"); err != nil {
						return err
					}
					done++
					if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM fault_probe").Scan(&n); err != nil {
						return err
					}
					done++
					rows, err := tx.Query(ctx, "SELECT id FROM fault_probe")
					if err != nil {
						return err
					}
					rows.Close()
					done++
					return nil
				}) // commit: one call
				if err == nil {
					done++
				}
				return done, err
			}
			f.Arm(0)
			if _, err := steps(); err != nil {
				t.Fatal(err)
			}
			calls := f.Disarm()
			if calls != 8 {
				t.Fatalf("a dry run counted %d calls, want 8", calls)
			}
			if _, ok := f.Fired(); ok {
				t.Fatal("a dry run fired")
			}
			for n := int64(1); n <= calls; n++ {
				f.Arm(n)
				done, err := steps()
				f.Disarm()
				if !errors.Is(err, store.ErrInjected) {
					t.Fatalf("armed with %d: %v, want ErrInjected", n, err)
				}
				fired, ok := f.Fired()
				if !ok || fired.N != n {
					t.Fatalf("armed with %d: fired %v %v", n, fired, ok)
				}
				if want := n - 1; int64(done) != want {
					t.Errorf("armed with %d: %d calls done before the error, want %d", n, done, want)
				}
				if fired.Op == "commit" && !errors.Is(err, store.ErrCommitUnknown) {
					t.Errorf("a failed commit = %v, want ErrCommitUnknown", err)
				}
				var rows int
				if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM fault_probe").Scan(&rows); err != nil {
					t.Fatal(err)
				}
				if n >= 4 && rows != 0 {
					t.Errorf("armed with %d (%s): the failed transaction left %d rows", n, fired, rows)
				}
			}
			if _, err := steps(); err != nil {
				t.Fatalf("disarmed: %v", err)
			}
		})
	}
}

func exec(ctx context.Context, db *store.DB, q string) error {
	_, err := db.Exec(ctx, q)
	return err
}
