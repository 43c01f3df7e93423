package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// TestMain lets the test binary act as waymark when the bench starts it as
// a child (serve, worker), so the bench test needs no separate build.
func TestMain(m *testing.M) {
	if os.Getenv("WAYMARK_TEST_AS_CLI") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := runCLI(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	benchExe, benchEnv = exe, []string{"WAYMARK_TEST_AS_CLI=1"}
	os.Exit(m.Run())
}

// benchFigures runs waymark bench with args and returns its figures by name.
func benchFigures(t *testing.T, args ...string) map[string]float64 {
	t.Helper()
	code, stdout, stderr := cli(t, append([]string{"bench"}, args...)...)
	if code != 0 {
		t.Fatalf("waymark bench %v exited %d: %s", args, code, stderr)
	}
	got := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		name, rest, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("line %q is not name: value unit", line)
		}
		v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got[name] = v
	}
	return got
}

// wantSaneFigures checks that every figure is printed and plausible.
func wantSaneFigures(t *testing.T, f map[string]float64) {
	t.Helper()
	for _, name := range []string{"tours/s", "card_answers/s", "answer_latency_p50", "answer_latency_p99",
		"db_transactions/answer", "server_peak_rss", "baseline_commits/s", "unfinished_tours"} {
		if _, ok := f[name]; !ok {
			t.Errorf("no %s line in %v", name, f)
		}
	}
	if f["tours/s"] <= 0 || f["card_answers/s"] <= 0 {
		t.Errorf("tours/s %v, card_answers/s %v: want both > 0", f["tours/s"], f["card_answers/s"])
	}
	if f["card_answers/s"] < f["tours/s"] {
		t.Errorf("card_answers/s %v < tours/s %v: every tour answers at least one card", f["card_answers/s"], f["tours/s"])
	}
	if f["answer_latency_p50"] <= 0 || f["answer_latency_p50"] > f["answer_latency_p99"] {
		t.Errorf("p50 %v, p99 %v: want 0 < p50 <= p99", f["answer_latency_p50"], f["answer_latency_p99"])
	}
	if f["db_transactions/answer"] <= 0 || f["server_peak_rss"] <= 0 || f["baseline_commits/s"] <= 0 {
		t.Errorf("transactions/answer %v, RSS %v MB, baseline %v: want all > 0", f["db_transactions/answer"], f["server_peak_rss"], f["baseline_commits/s"])
	}
}

func TestBenchPrintsEveryFigureOnSQLite(t *testing.T) {
	wantSaneFigures(t, benchFigures(t, "--duration", "2s", "--conversations", "2"))
}

func TestBenchPrintsEveryFigureOnPostgresWithOneWorkerProcess(t *testing.T) {
	if os.Getenv("WAYMARK_TEST_POSTGRES") == "" {
		t.Skip("WAYMARK_TEST_POSTGRES is not set")
	}
	wantSaneFigures(t, benchFigures(t, "--db", storetest.PostgresURL(t), "--worker-processes", "1", "--duration", "2s", "--conversations", "2"))
}

func TestBenchRefusesBadFlagsAndStartsNothing(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--worker-processes", "2"}, "SQLite allows only 1 worker process"},
		{[]string{"--conversations", "0"}, "--conversations must be 1 or more"},
		{[]string{"--duration", "0s"}, "--duration must be positive"},
		{[]string{"--db", "mysql://x"}, "bad database URL"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--typo3", "mysql://root@127.0.0.1:1/t3", "--db", "sqlite:" + filepath.Join(t.TempDir(), "b.db")}, "leave out --db"},
		{[]string{"--typo3-sites", t.TempDir()}, "--typo3-sites needs --typo3"},
		{[]string{"--typo3", "not-a-dsn"}, "typo3 database: want mysql://"},
	}
	for _, c := range cases {
		code, stdout, stderr := cli(t, append([]string{"bench"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) || stdout != "" {
			t.Errorf("bench %v = exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// realInstallation makes an operator's SQLite installation as the README's
// "your own data" commands do: the example site and users, a token, the
// secret key beside the file. It returns the --db URL and its folder.
func realInstallation(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "waymark.db")
	for _, args := range [][]string{
		{"migrate", "--db", db},
		{"import", "--db", db, "../../examples/site.yaml", "../../examples/users.json"},
		{"token", "--db", db, "erika"},
	} {
		if code, _, stderr := cli(t, args...); code != 0 {
			t.Fatalf("waymark %v: %s", args, stderr)
		}
	}
	return db, dir
}

// dumpDB is every row of every table of the SQLite database db, each table
// sorted, as text: what a byte-for-byte comparison misses (WAL) it sees.
func dumpDB(t *testing.T, url string) map[string][]string {
	t.Helper()
	db, err := store.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tables, err := store.Collect(t.Context(), db, store.Column[string], "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, table := range tables {
		rows, err := db.Query(t.Context(), "SELECT * FROM "+table)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out[table] = append(out[table], fmt.Sprintf("%q", vals))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		slices.Sort(out[table])
	}
	return out
}

// folderFiles is every file of dir with its bytes.
func folderFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// wantSameRows fails the test for every table whose rows changed.
func wantSameRows(t *testing.T, before, after map[string][]string) {
	t.Helper()
	for table := range before {
		if !slices.Equal(before[table], after[table]) {
			t.Errorf("table %s changed:\nbefore %v\nafter  %v", table, before[table], after[table])
		}
	}
	for table := range after {
		if _, ok := before[table]; !ok {
			t.Errorf("table %s appeared: %v", table, after[table])
		}
	}
}

// The bug: `waymark bench` with WAYMARK_DB set, as the README tells
// operators, and no --db ran on that database — the admin renamed
// bench-admin, page 1's SEO title gone, configuration 1 on the bench's dead
// model, a user bench-editor-0 answering to a token written in the source.
// The bench now runs on a database of its own and leaves the installation's
// folder as it was, byte for byte.
func TestBenchWithWAYMARK_DBSetLeavesThatDatabaseUntouched(t *testing.T) {
	db, dir := realInstallation(t)
	rows, files := dumpDB(t, db), folderFiles(t, dir)
	if len(rows["be_users"]) == 0 || len(rows["records"]) == 0 || len(rows["configurations"]) == 0 || len(rows["api_tokens"]) == 0 {
		t.Fatalf("the installation lacks users, records, configurations or tokens: %v", rows)
	}
	t.Setenv("WAYMARK_DB", db)
	t.Setenv("WAYMARK_DATA_DIR", dir)
	if f := benchFigures(t, "--duration", "2s", "--conversations", "1"); f["card_answers/s"] <= 0 {
		t.Errorf("bench answered no card: %v", f)
	}
	after := folderFiles(t, dir)
	if len(after) != len(files) {
		t.Errorf("the installation's folder holds %d files after the bench, %d before", len(after), len(files))
	}
	for name, b := range files {
		if after[name] != b {
			t.Errorf("%s changed", name)
		}
	}
	wantSameRows(t, rows, dumpDB(t, db))
}

// A database that holds data bench did not make is refused with one line
// when --db (or WAYMARK_BENCH_DB) names it, and nothing in it changes.
func TestBenchRefusesADatabaseItDidNotMakeAndChangesNothing(t *testing.T) {
	db, dir := realInstallation(t)
	rows, files := dumpDB(t, db), folderFiles(t, dir)
	for _, c := range []struct {
		args []string
		env  string
	}{{[]string{"--db", db}, ""}, {nil, db}} {
		t.Setenv("WAYMARK_BENCH_DB", c.env)
		code, stdout, stderr := cli(t, append([]string{"bench", "--duration", "1s", "--conversations", "1"}, c.args...)...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 1 || stdout != "" || len(lines) != 1 || !strings.Contains(stderr, "rows in be_users") || !strings.Contains(stderr, "bench did not make") {
			t.Errorf("bench %v (WAYMARK_BENCH_DB %q) = exit %d, stdout %q, stderr %q; want 1 and one line refusing the database", c.args, c.env, code, stdout, stderr)
		}
		if after := folderFiles(t, dir); after["waymark.db"] != files["waymark.db"] || after["secret.key"] != files["secret.key"] {
			t.Errorf("bench %v changed the database file or the key", c.args)
		}
		wantSameRows(t, rows, dumpDB(t, db))
	}
}

// A database an earlier bench made is the bench's to reuse: it keeps the
// run's key, and the fixture is imported again with new tokens.
func TestBenchReusesADatabaseItMade(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "bench.db")
	for range 2 { // the second run opens the first's configuration with the key kept in the database
		if f := benchFigures(t, "--db", db, "--duration", "2s", "--conversations", "1"); f["card_answers/s"] <= 0 {
			t.Errorf("bench answered no card: %v", f)
		}
	}
	rows := dumpDB(t, db)
	if n := len(rows["api_tokens"]); n != 2 {
		t.Errorf("bench database holds %d API tokens after two runs of one editor, want 2 (one per run)", n)
	}
}

// On PostgreSQL as on SQLite: a schema holding an installation's data is
// refused and keeps every row; no marker table appears in it.
func TestBenchRefusesAPostgresDatabaseItDidNotMake(t *testing.T) {
	url := storetest.PostgresURL(t)
	keyDir := t.TempDir()
	if code, _, stderr := cli(t, "import", "--db", url, "--data-dir", keyDir, "../../examples/site.yaml", "../../examples/users.json"); code != 0 {
		t.Fatalf("import: %s", stderr)
	}
	counts := func() string {
		db, err := store.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var out []string
		for _, table := range []string{"be_users", "records", "configurations", "api_tokens", "secret_key_check"} {
			var n int
			var sum string
			if err := db.QueryRow(t.Context(), "SELECT count(*), coalesce(string_agg(t::text, '|' ORDER BY t::text), '') FROM "+table+" t").Scan(&n, &sum); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s %d %s", table, n, sum))
		}
		var marker int
		if err := db.QueryRow(t.Context(), "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'waymark_bench'").Scan(&marker); err != nil {
			t.Fatal(err)
		}
		return strings.Join(out, "\n") + fmt.Sprintf("\nmarker tables %d", marker)
	}
	before := counts()
	code, stdout, stderr := cli(t, "bench", "--db", url, "--duration", "1s", "--conversations", "1")
	if code != 1 || stdout != "" || !strings.Contains(stderr, "rows in be_users") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("bench on an installation's PostgreSQL schema = exit %d, stdout %q, stderr %q; want 1 and one line", code, stdout, stderr)
	}
	if after := counts(); after != before {
		t.Errorf("the schema changed:\nbefore %s\nafter  %s", before, after)
	}
}

// A database of another program (tables, none of Waymark's) is refused too.
func TestBenchRefusesADatabaseOfAnotherProgram(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shop.db")
	db, err := store.Open(t.Context(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(t.Context(), "CREATE TABLE orders (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)
	code, _, stderr := cli(t, "bench", "--db", "sqlite:"+path, "--duration", "1s", "--conversations", "1")
	if code != 1 || !strings.Contains(stderr, "tables (orders)") {
		t.Errorf("bench on another program's database = %d %q, want 1 naming its tables", code, stderr)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the database file changed")
	}
}
