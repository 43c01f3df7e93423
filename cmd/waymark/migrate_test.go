package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// Issue 15 item 3: several processes starting at once on one PostgreSQL
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

// Issue 15 item 3: serve and worker refuse a database whose schema is newer
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
