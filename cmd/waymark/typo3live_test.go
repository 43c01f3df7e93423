package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"waymark/internal/demo"
	"waymark/internal/typo3"
)

func countRows(t *testing.T, dbFile, table string) int {
	t.Helper()
	db, err := sql.Open("sqlite", dbFile)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// With --typo3, import takes what Waymark keeps itself and refuses the
// demo site as a whole — its languages, pages, records and the accounts
// and rights of its users and groups come from TYPO3 — writing nothing.
func TestImportBesideTYPO3TakesWaymarksPartAndRefusesWhatTYPO3Owns(t *testing.T) {
	eachTYPO3DB(t, func(t *testing.T, dsn string, _ *sql.DB) {
		sites := filepath.Join(t.TempDir(), "sites")
		if code, out, stderr := cli(t, "typo3", "demo", "--typo3", dsn, "--typo3-sites", sites); code != 0 {
			t.Fatalf("typo3 demo = %d\n%s%s", code, out, stderr)
		}
		dir := t.TempDir()
		dbFile := filepath.Join(dir, "waymark.db")
		whole := filepath.Join(dir, "site.yaml")
		if err := os.WriteFile(whole, demo.Fixture, 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := cli(t, "import", "--db", "sqlite:"+dbFile, "--typo3", dsn, "--typo3-sites", sites, whole)
		if out != "" {
			t.Errorf("the refused import printed %q", out)
		}
		for _, want := range []string{"pages come from TYPO3", "records come from TYPO3",
			"site languages come from TYPO3's site configurations", "users[0].password: a user's account and rights come from TYPO3"} {
			if code == 0 || !strings.Contains(stderr, want) {
				t.Errorf("import of the whole demo beside TYPO3 = %d %q, want it refused with %q", code, stderr, want)
			}
		}
		if n := countRows(t, dbFile, "be_users") + countRows(t, dbFile, "configurations"); n != 0 {
			t.Errorf("the refused import wrote %d users and configurations", n)
		}
		part := filepath.Join(filepath.Dir(sites), "waymark-demo.json") // written by typo3 demo
		code, out, stderr = cli(t, "import", "--db", "sqlite:"+dbFile, "--typo3", dsn, "--typo3-sites", sites, part)
		if code != 0 || !strings.HasPrefix(out, "imported ") {
			t.Fatalf("import of Waymark's part beside TYPO3 = %d %s%s", code, out, stderr)
		}
		if n := countRows(t, dbFile, "records"); n != 0 {
			t.Errorf("Waymark's part wrote %d records", n)
		}
		if n := countRows(t, dbFile, "configurations"); n != 2 {
			t.Errorf("Waymark's part of the demo wrote %d configurations, want the demo's 2", n)
		}
	})
}

// serve, worker and import with --typo3: a DSN that does not connect, a
// database without TYPO3's tables and a malformed site configuration are
// each one line naming the fault (never the password), and Waymark's
// database is not even created.
func TestBesideTYPO3BadInputIsOneLineAndWritesNothing(t *testing.T) {
	sites := t.TempDir()
	if err := typo3.WriteDemoSites(sites); err != nil {
		t.Fatal(err)
	}
	bad := t.TempDir()
	if err := os.MkdirAll(filepath.Join(bad, "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "broken", "config.yaml"), []byte("rootPageId: [1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runBad(t, []badCase{
		{"mysql://waymark:s3cret-pw@127.0.0.1:1/typo3", sites, "does not answer", 1},
		{"oracle://waymark:s3cret-pw@db/typo3", sites, `scheme "oracle"`, 2},
		{"", sites, "--typo3-sites needs --typo3 DSN", 2},
		{"mysql://waymark:s3cret-pw@127.0.0.1:1/typo3", "", "--typo3-sites DIR is required with --typo3", 2},
	})
	eachTYPO3DB(t, func(t *testing.T, dsn string, _ *sql.DB) {
		runBad(t, []badCase{{dsn, sites, "missing tables be_groups, be_users, pages, tt_content, sys_file, sys_file_reference", 1}})
		if code, out, stderr := cli(t, "typo3", "demo", "--typo3", dsn, "--typo3-sites", t.TempDir()); code != 0 {
			t.Fatalf("typo3 demo = %d %s%s", code, out, stderr)
		}
		runBad(t, []badCase{{dsn, bad, filepath.Join("broken", "config.yaml"), 1}})
	})
}

type badCase struct {
	dsn, sites, want string
	code             int
}

func runBad(t *testing.T, cases []badCase) {
	t.Helper()
	for _, c := range cases {
		for _, cmd := range [][]string{{"import"}, {"serve", "--addr", "127.0.0.1:0"}, {"worker"}} {
			dbFile := filepath.Join(t.TempDir(), "waymark.db")
			args := append(append([]string(nil), cmd...), "--db", "sqlite:"+dbFile)
			if c.dsn != "" {
				args = append(args, "--typo3", c.dsn)
			}
			if c.sites != "" {
				args = append(args, "--typo3-sites", c.sites)
			}
			if cmd[0] == "import" {
				args = append(args, "nothing.yaml")
			}
			code, out, stderr := cli(t, args...)
			first, _, _ := strings.Cut(stderr, "\n")
			if code != c.code || !strings.Contains(first, c.want) || out != "" {
				t.Errorf("%v = %d %q %q, want exit %d and %q on the first line", args, code, out, stderr, c.code, c.want)
			}
			if strings.Contains(stderr, "s3cret-pw") {
				t.Errorf("%v shows the password: %q", args, stderr)
			}
			if c.code == 1 && strings.Count(stderr, "\n") != 1 {
				t.Errorf("%v printed more than one line: %q", args, stderr)
			}
			if _, err := os.Stat(dbFile); !os.IsNotExist(err) {
				t.Errorf("%v created Waymark's database", args)
			}
		}
	}
}

// Beside TYPO3, `waymark token` gives a TYPO3 editor who never logged in to
// Waymark an API token (for an MCP client, say): the user is found in
// TYPO3, Waymark keeps its row of her under her TYPO3 uid, and serve
// --typo3 knows her by the token. A user TYPO3 does not know, or has
// disabled, gets none; without --typo3 Waymark's own directory answers.
func TestTokenBesideTYPO3IsForATYPO3UserWhoNeverLoggedIn(t *testing.T) {
	eachTYPO3DB(t, func(t *testing.T, dsn string, t3 *sql.DB) {
		sites := filepath.Join(t.TempDir(), "sites")
		if code, out, stderr := cli(t, "typo3", "demo", "--typo3", dsn, "--typo3-sites", sites); code != 0 {
			t.Fatalf("typo3 demo = %d\n%s%s", code, out, stderr)
		}
		dbURL := "sqlite:" + filepath.Join(t.TempDir(), "waymark.db")
		if code, _, stderr := cli(t, "token", "--db", dbURL, "max"); code == 0 || !strings.Contains(stderr, `no user "max"`) {
			t.Errorf("token without --typo3 = %d %q, want no user", code, stderr)
		}
		for _, c := range []struct{ user, want string }{{"nobody", `no user "nobody"`}} {
			if code, _, stderr := cli(t, "token", "--db", dbURL, "--typo3", dsn, "--typo3-sites", sites, c.user); code == 0 || !strings.Contains(stderr, c.want) {
				t.Errorf("token for %s = %d %q, want %q", c.user, code, stderr, c.want)
			}
		}
		code, out, stderr := cli(t, "token", "--db", dbURL, "--typo3", dsn, "--typo3-sites", sites, "max")
		tok := strings.TrimSpace(out)
		if code != 0 || tok == "" {
			t.Fatalf("token for TYPO3's max = %d %q %s", code, out, stderr)
		}
		base, stop := startServe(t, "--db", dbURL, "--typo3", dsn, "--typo3-sites", sites, "--workers", "0")
		defer stop()
		var me struct {
			UID      int64  `json:"uid"`
			Username string `json:"username"`
		}
		apiDo(t, base, tok, "GET", "/api/me", nil, 200, &me)
		var uid int64
		if err := t3.QueryRow("SELECT uid FROM be_users WHERE username = 'max'").Scan(&uid); err != nil {
			t.Fatal(err)
		}
		if me.Username != "max" || me.UID != uid {
			t.Errorf("the token names %+v, want TYPO3's max (uid %d)", me, uid)
		}
		// Disabled in TYPO3: no new token, and the one issued stops at the next request.
		if _, err := t3.Exec(fmt.Sprintf("UPDATE be_users SET disable = 1 WHERE uid = %d", uid)); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := cli(t, "token", "--db", dbURL, "--typo3", dsn, "--typo3-sites", sites, "max"); code == 0 || !strings.Contains(stderr, `user "max" is disabled`) {
			t.Errorf("token for a disabled TYPO3 user = %d %q", code, stderr)
		}
		apiDo(t, base, tok, "GET", "/api/me", nil, 401, nil)
	})
}
