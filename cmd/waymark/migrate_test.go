package main

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// Several processes starting at once on one PostgreSQL
// migrate under a lock; none fails, and the schema ends current.
func TestConcurrentMigrationsOnOnePostgresAllSucceed(t *testing.T) {
	url := storetest.PostgresURL(t)
	const n = 4
	var wg sync.WaitGroup
	codes := make([]int, n)
	errs := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, errs[i] = cli(t, "migrate", "--db", url)
		}()
	}
	wg.Wait()
	for i := range n {
		if codes[i] != 0 {
			t.Errorf("migrate %d exited %d: %s", i, codes[i], errs[i])
		}
	}
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if ok, err := db.MigrationsCurrent(context.Background()); err != nil || !ok {
		t.Fatalf("migrations current = %v, %v after concurrent migrate", ok, err)
	}
	var jobs int
	if err := db.SQL.QueryRow("SELECT count(*) FROM river_job").Scan(&jobs); err != nil {
		t.Fatalf("river_job after concurrent migrate: %v", err)
	}
}

// Serve and worker refuse a database whose schema is newer
// than this binary knows, with one line saying so; migrate too.
func TestNewerSchemaIsRefusedWithOneLine(t *testing.T) {
	urls := map[string]string{"sqlite": "sqlite:" + filepath.Join(t.TempDir(), "w.db")}
	if os.Getenv(storetest.EnvPostgres) != "" {
		urls["postgres"] = storetest.PostgresURL(t)
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			if code, _, stderr := cli(t, "migrate", "--db", url); code != 0 {
				t.Fatalf("migrate: %s", stderr)
			}
			db, err := store.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(context.Background(), "INSERT INTO goose_db_version (version_id, is_applied) VALUES (99999, true)"); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"migrate", "--db", url},
				{"worker", "--db", url, "--data-dir", t.TempDir()},
				{"serve", "--db", url, "--addr", "127.0.0.1:0", "--data-dir", t.TempDir()},
			} {
				code, _, stderr := cli(t, args...)
				if code == 0 {
					t.Fatalf("waymark %v on a newer schema exited 0", args)
				}
				lines := strings.Split(strings.TrimSpace(stderr), "\n")
				last := lines[len(lines)-1]
				if !strings.HasPrefix(last, "waymark "+args[0]+": ") || !strings.Contains(last, "schema version 99999 is newer than this waymark knows") {
					t.Errorf("waymark %s: stderr %q", args[0], stderr)
				}
			}
		})
	}
}

// migrateDBs is a fresh SQLite database and, when the test PostgreSQL is
// configured, a schema of the test's own.
func migrateDBs(t *testing.T) map[string]string {
	urls := map[string]string{"sqlite": "sqlite:" + filepath.Join(t.TempDir(), "w.db")}
	if os.Getenv(storetest.EnvPostgres) != "" {
		urls["postgres"] = storetest.PostgresURL(t)
	}
	return urls
}

// statusLines returns migrate --status's state of each version.
func statusLines(t *testing.T, url string) (map[string]string, string) {
	t.Helper()
	code, stdout, stderr := cli(t, "migrate", "--status", "--db", url)
	if code != 0 {
		t.Fatalf("migrate --status = %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	states := map[string]string{}
	for _, l := range lines[1 : len(lines)-1] {
		f := strings.Fields(l)
		if len(f) != 3 {
			t.Fatalf("status line %q: want VERSION NAME STATE", l)
		}
		states[f[0]] = f[2]
	}
	return states, lines[len(lines)-1]
}

// fixtureRows counts the rows the key fixture stores in tables the schema
// of version 4 already has.
func fixtureRows(t *testing.T, url string) map[string]int {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got := map[string]int{}
	for _, table := range []string{"languages", "be_groups", "records", "configurations"} {
		var n int
		if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		got[table] = n
	}
	return got
}

// Upgrades both ways: migrate --to an older version runs the down
// migrations under the migration lock, --status shows which are applied,
// and the data the older schema holds survives the way down and up again;
// the application starts on the schema brought back up.
func TestMigrateToAnOlderVersionAndBackKeepsTheDataTheOlderSchemaHolds(t *testing.T) {
	t.Setenv("WAYMARK_SECRET_KEY", strings.Repeat("a", 64))
	for name, url := range migrateDBs(t) {
		t.Run(name, func(t *testing.T) {
			if code, _, stderr := cli(t, "import", "--db", url, writeFixture(t)); code != 0 {
				t.Fatalf("import: %s", stderr)
			}
			before := fixtureRows(t, url)
			if before["records"] == 0 || before["configurations"] != 1 {
				t.Fatalf("fixture rows %v, want a page record and a configuration", before)
			}
			states, summary := statusLines(t, url)
			if len(states) < 10 || states["25"] != "applied" || !strings.HasPrefix(summary, "schema version 25 on ") || !strings.HasSuffix(summary, "knows up to 25") {
				t.Fatalf("status after import: %v, %q", states, summary)
			}
			code, stdout, stderr := cli(t, "migrate", "--to", "4", "--db", url)
			if code != 0 || !strings.Contains(stdout, "rolled back to version 4") {
				t.Fatalf("migrate --to 4 = %d, %q, %q", code, stdout, stderr)
			}
			states, summary = statusLines(t, url)
			for v, s := range states {
				n, _ := strconv.Atoi(v)
				if want := map[bool]string{true: "applied", false: "pending"}[n <= 4]; s != want {
					t.Errorf("after --to 4 version %s is %s, want %s", v, s, want)
				}
			}
			if !strings.HasPrefix(summary, "schema version 4 on ") {
				t.Errorf("summary after --to 4: %q", summary)
			}
			if got := fixtureRows(t, url); !maps.Equal(got, before) {
				t.Errorf("rows at version 4 = %v, want %v", got, before)
			}
			if code, stdout, stderr := cli(t, "migrate", "--to", "25", "--db", url); code != 0 || !strings.Contains(stdout, "migrated up to version 25") {
				t.Fatalf("migrate --to 25 = %d, %q, %q", code, stdout, stderr)
			}
			if got := fixtureRows(t, url); !maps.Equal(got, before) {
				t.Errorf("rows back at version 25 = %v, want %v", got, before)
			}
			// The application starts on it: the key still opens the sealed provider key.
			if code, _, stderr := cli(t, "import", "--db", url, writeFixture(t)); code != 0 {
				t.Errorf("import after the round trip: %s", stderr)
			}
		})
	}
}

// migrate --to refuses a version above the binary's newest, one that is
// not a migration, and bad values, with one line, and changes nothing.
func TestMigrateToRefusesAnUnknownVersionAndChangesNothing(t *testing.T) {
	for name, url := range migrateDBs(t) {
		t.Run(name, func(t *testing.T) {
			if code, _, stderr := cli(t, "migrate", "--db", url); code != 0 {
				t.Fatalf("migrate: %s", stderr)
			}
			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"--to", "99"}, "unknown schema version 99: the newest this waymark knows is 25"},
				{[]string{"--to", "12"}, "unknown schema version 12: not one of this waymark's migrations"},
				{[]string{"--to", "0"}, `--to "0": want a schema version`},
				{[]string{"--to", "latest"}, `--to "latest": want a schema version`},
				{[]string{"--to", "4", "--status"}, "--to and --status exclude each other"},
			} {
				code, _, stderr := cli(t, append([]string{"migrate", "--db", url}, c.args...)...)
				first := firstLine(stderr)
				if code != 2 || !strings.HasPrefix(first, "waymark migrate: ") || !strings.Contains(first, c.want) {
					t.Errorf("migrate %v = %d, %q; want exit 2 and %q", c.args, code, stderr, c.want)
				}
			}
			if _, summary := statusLines(t, url); !strings.HasPrefix(summary, "schema version 25 on ") {
				t.Errorf("after refused migrations: %q", summary)
			}
		})
	}
}
