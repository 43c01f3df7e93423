package main

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"waymark/internal/typo3"
)

func init() { demoArgon2 = typo3.Argon2Params{Memory: 1024, Time: 1, Threads: 1} } // the demo's hashing at test cost

// typo3Skip skips, or fails under CI, when a test server is missing.
func typo3Skip(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format+" (CI is set: the test must run)", args...)
	}
	t.Skipf(format, args...)
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// eachTYPO3DB runs fn on a fresh, empty MariaDB database and a fresh
// PostgreSQL schema, each given as the DSN --typo3 takes and dropped at cleanup.
func eachTYPO3DB(t *testing.T, fn func(t *testing.T, dsn string, db *sql.DB)) {
	t.Run("mariadb", func(t *testing.T) {
		raw := os.Getenv("WAYMARK_TEST_MARIADB")
		if raw == "" {
			raw = "root@tcp(127.0.0.1:3306)/"
		}
		cfg, err := mysql.ParseDSN(raw)
		if err != nil {
			t.Fatalf("WAYMARK_TEST_MARIADB: %v", err)
		}
		admin, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		if err := admin.Ping(); err != nil {
			typo3Skip(t, "MariaDB at %s is not reachable (%v): set WAYMARK_TEST_MARIADB or start it", cfg.Addr, err)
		}
		name := "waymark_cli_" + randomSuffix()
		if _, err := admin.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE " + name) })
		cfg.DBName = name
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		u := url.URL{Scheme: "mysql", Host: cfg.Addr, Path: "/" + name, User: url.User(cfg.User)}
		if cfg.Passwd != "" {
			u.User = url.UserPassword(cfg.User, cfg.Passwd)
		}
		fn(t, u.String(), db)
	})
	t.Run("postgres", func(t *testing.T) {
		base := os.Getenv("WAYMARK_TEST_POSTGRES")
		if base == "" {
			typo3Skip(t, "WAYMARK_TEST_POSTGRES is not set: no server for the PostgreSQL half")
		}
		admin, err := sql.Open("pgx", base)
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		if err := admin.Ping(); err != nil {
			typo3Skip(t, "PostgreSQL of WAYMARK_TEST_POSTGRES is not reachable: %v", err)
		}
		schema := "t3cli_" + randomSuffix()
		if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE") })
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		db, err := sql.Open("pgx", u.String())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		fn(t, u.String(), db)
	})
}

// snapshot is what a refused command must leave as it was: the backend
// users and pages of the TYPO3 database and the site configuration files.
func snapshot(t *testing.T, db *sql.DB, sites string) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{"SELECT COUNT(*), COALESCE(SUM(uid), 0) FROM be_users", "SELECT COUNT(*), COALESCE(SUM(tstamp), 0) FROM pages"} {
		var n, sum int64
		if err := db.QueryRow(q).Scan(&n, &sum); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		fmt.Fprintf(&b, "%s: %d %d\n", q, n, sum)
	}
	_ = filepath.WalkDir(sites, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			b.WriteString(p + "\n" + string(data))
		}
		return nil
	})
	return b.String()
}

// Demo, then check, on a fresh database: the report names the site
// "Nordlicht Digital", its languages and the users who can log in, and says
// the installation is usable.
func TestTYPO3DemoThenCheckReportsAUsableInstallation(t *testing.T) {
	eachTYPO3DB(t, func(t *testing.T, dsn string, db *sql.DB) {
		sites := filepath.Join(t.TempDir(), "config", "sites")
		code, out, stderr := cli(t, "typo3", "demo", "--typo3", dsn, "--typo3-sites", sites)
		if code != 0 || !strings.Contains(out, `created the demo TYPO3 database "Nordlicht Digital"`) {
			t.Fatalf("typo3 demo = %d\n%s%s", code, out, stderr)
		}
		code, out, stderr = cli(t, "typo3", "check", "--typo3", dsn, "--typo3-sites", sites)
		if code != 0 || stderr != "" {
			t.Fatalf("typo3 check = %d\n%s%s", code, out, stderr)
		}
		for _, want := range []string{
			`site nordlicht "Nordlicht Digital": root page 1, 0 English (en_US.UTF-8); 1 Deutsch (de_DE.UTF-8)`,
			`site intranet "Nordlicht Digital Intranet": root page 20, 0 English (en_US.UTF-8)`,
			"backend users: 5 active (1 admins), 4 can log in to Waymark, 1 without password",
			"can log in to Waymark: admin, erika, max, paula",
			"pages.seo_title exists: the core extension seo is installed",
			"usable: Waymark finds every table and column it needs",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("typo3 check lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "missing") {
			t.Errorf("typo3 check on the demo reports something missing:\n%s", out)
		}
	})
}

// A second demo on the same database is refused with one line, and neither
// the database nor the site configurations change.
func TestTYPO3DemoTwiceIsRefusedAndChangesNothing(t *testing.T) {
	eachTYPO3DB(t, func(t *testing.T, dsn string, db *sql.DB) {
		sites := filepath.Join(t.TempDir(), "sites")
		if code, out, stderr := cli(t, "typo3", "demo", "--typo3", dsn, "--typo3-sites", sites); code != 0 {
			t.Fatalf("first typo3 demo = %d\n%s%s", code, out, stderr)
		}
		before := snapshot(t, db, sites)
		other := filepath.Join(t.TempDir(), "other-sites")
		code, out, stderr := cli(t, "typo3", "demo", "--typo3", dsn, "--typo3-sites", other)
		if code != 1 || out != "" || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, "already has TYPO3 tables (be_groups, be_users,") || !strings.Contains(stderr, "nothing was changed") {
			t.Errorf("second typo3 demo = %d %q %q, want exit 1 and one line naming the tables", code, out, stderr)
		}
		if _, err := os.Stat(other); !os.IsNotExist(err) {
			t.Errorf("the refused demo wrote site configurations into %s", other)
		}
		if after := snapshot(t, db, sites); after != before {
			t.Errorf("the refused demo changed the database or the sites:\nbefore %s\nafter %s", before, after)
		}
	})
}

// check on an empty database names every missing table and exits 1,
// creating nothing.
func TestTYPO3CheckOnAnEmptyDatabaseNamesTheMissingTables(t *testing.T) {
	eachTYPO3DB(t, func(t *testing.T, dsn string, db *sql.DB) {
		sites := t.TempDir()
		if err := typo3.WriteDemoSites(sites); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := cli(t, "typo3", "check", "--typo3", dsn, "--typo3-sites", sites)
		if code != 1 || !strings.Contains(stderr, "not usable: 10 missing table(s)") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("typo3 check on an empty database = %d %q", code, stderr)
		}
		for _, table := range typo3.Tables() {
			if !strings.Contains(out, "missing table: "+table+"\n") {
				t.Errorf("typo3 check does not name the missing table %s:\n%s", table, out)
			}
		}
		if strings.Contains(out, "usable:") {
			t.Errorf("typo3 check calls an empty database usable:\n%s", out)
		}
		if have, err := typo3.ExistingTables(t.Context(), db, dialectOf(dsn)); err != nil || len(have) != 0 {
			t.Errorf("after check the database has tables %v (%v)", have, err)
		}
	})
}

func dialectOf(dsn string) typo3.Dialect {
	if strings.HasPrefix(dsn, "mysql:") {
		return typo3.MariaDB
	}
	return typo3.Postgres
}

// Bad or unreachable DSNs and a missing sites folder: one line naming the
// fault, never the password; exit 2 for what the command line got wrong,
// 1 for a database that does not answer.
func TestTYPO3BadInputIsOneLineWithoutThePassword(t *testing.T) {
	sites := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"check", "--typo3", "mysql://waymark:s3cret-pw@127.0.0.1:1/typo3", "--typo3-sites", sites}, 1,
			"typo3 database mysql://waymark:xxxxx@127.0.0.1:1/typo3 does not answer"},
		{[]string{"demo", "--typo3", "postgres://waymark:s3cret-pw@127.0.0.1:1/typo3?connect_timeout=5", "--typo3-sites", sites}, 1,
			"does not answer"},
		{[]string{"check", "--typo3", "waymark:s3cret-pw@tcp(127.0.0.1:3306)/typo3", "--typo3-sites", sites}, 2,
			"want mysql://user:password@host:port/database"},
		{[]string{"check", "--typo3", "oracle://waymark:s3cret-pw@db/typo3", "--typo3-sites", sites}, 2, `scheme "oracle"`},
		{[]string{"check", "--typo3", "mysql://waymark:s3cret-pw@127.0.0.1:1/typo3", "--typo3-sites", filepath.Join(sites, "nowhere")}, 1,
			"--typo3-sites " + filepath.Join(sites, "nowhere") + ": the folder does not exist"},
		{[]string{"check", "--typo3-sites", sites}, 2, "--typo3 DSN (or WAYMARK_TYPO3) is required"},
		{[]string{"check", "--typo3", "mysql://waymark:s3cret-pw@127.0.0.1:1/typo3"}, 2, "--typo3-sites DIR is required"},
		{[]string{"import"}, 2, `unknown subcommand "import"`},
	} {
		code, out, stderr := cli(t, append([]string{"typo3"}, c.args...)...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != c.code || !strings.Contains(first, c.want) || out != "" {
			t.Errorf("typo3 %v = %d %q, want exit %d and %q on the first line", c.args, code, stderr, c.code, c.want)
		}
		if strings.Contains(stderr, "s3cret-pw") {
			t.Errorf("typo3 %v shows the password: %q", c.args, stderr)
		}
		if lines := strings.Count(stderr, "\n"); lines > 2 || (c.code == 1 && lines != 1) {
			t.Errorf("typo3 %v printed %d lines: %q", c.args, lines, stderr)
		}
	}
	// From the variable too, and a bad one never repeats the value.
	t.Setenv("WAYMARK_TYPO3", "mysql://waymark:s3cret-pw@127.0.0.1:1/typo3")
	code, _, stderr := cli(t, "typo3", "check", "--typo3-sites", sites)
	if code != 1 || !strings.Contains(stderr, "mysql://waymark:xxxxx@127.0.0.1:1/typo3 does not answer") || strings.Contains(stderr, "s3cret-pw") {
		t.Errorf("typo3 check with WAYMARK_TYPO3 = %d %q", code, stderr)
	}
}
