package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/skill"
)

// besideTYPO3Demo creates the TYPO3 demo in dsn and returns its sites
// folder and a new Waymark database beside it.
func besideTYPO3Demo(t *testing.T, dsn string) (sites, dbURL string) {
	t.Helper()
	sites = filepath.Join(t.TempDir(), "sites")
	if code, out, stderr := cli(t, "typo3", "demo", "--typo3", dsn, "--typo3-sites", sites); code != 0 {
		t.Fatalf("typo3 demo = %d\n%s%s", code, out, stderr)
	}
	return sites, "sqlite:" + filepath.Join(t.TempDir(), "waymark.db")
}

// `waymark mcp` beside TYPO3 shows its client TYPO3's site, as serve does:
// it used to build its application on Waymark's built-in tables and list an
// empty page tree to an editor of the TYPO3 demo.
func TestMCPBesideTYPO3ListsTheTYPO3DemosPages(t *testing.T) {
	eachTYPO3DB(t, func(t *testing.T, dsn string, t3 *sql.DB) {
		sites, dbURL := besideTYPO3Demo(t, dsn)
		typo3 := []string{"--typo3", dsn, "--typo3-sites", sites}
		code, out, stderr := cli(t, append(append([]string{"token", "--db", dbURL}, typo3...), "erika")...)
		tok := strings.TrimSpace(out)
		if code != 0 || tok == "" {
			t.Fatalf("token for TYPO3's erika = %d %q %s", code, out, stderr)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		cmd := exec.Command(benchExe, append([]string{"mcp", "--db", dbURL, "--workers", "0"}, typo3...)...)
		cmd.Env = append(os.Environ(), append(benchEnv, "WAYMARK_TOKEN="+tok)...)
		var errb strings.Builder
		cmd.Stderr = &errb
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "cli-test", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connect to waymark mcp: %v\n%s", err, errb.String())
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_pages"})
		if err != nil || res.IsError || len(res.Content) == 0 {
			t.Fatalf("list_pages = %+v, %v\n%s", res, err, errb.String())
		}
		text, _ := res.Content[0].(*sdk.TextContent)
		if text == nil {
			t.Fatalf("list_pages answered %T, want text", res.Content[0])
		}
		for _, title := range []string{"Home", "About", "Services"} {
			var uid int64
			if err := t3.QueryRow("SELECT uid FROM pages WHERE title = '" + title + "' AND sys_language_uid = 0").Scan(&uid); err != nil {
				t.Fatalf("TYPO3's page %s: %v", title, err)
			}
			if want := fmt.Sprintf("- %s (uid %d)", title, uid); !strings.Contains(text.Text, want) {
				t.Errorf("list_pages over waymark mcp beside TYPO3 = %q, want TYPO3's page %q", text.Text, want)
			}
		}
	})
}

// `skill approve|revoke --as admin` beside TYPO3 finds TYPO3's
// administrator: it used to look in Waymark's built-in tables, where no
// TYPO3 user is, and refuse with no user "admin".
func TestSkillRevokeAsATYPO3AdministratorWorksBesideTYPO3(t *testing.T) {
	eachTYPO3DB(t, func(t *testing.T, dsn string, _ *sql.DB) {
		sites, dbURL := besideTYPO3Demo(t, dsn)
		root := t.TempDir()
		t.Setenv("WAYMARK_SKILLS_ROOT", root)
		dir := filepath.Join(root, "skills")
		if err := os.MkdirAll(filepath.Join(dir, "alpha"), 0o755); err != nil {
			t.Fatal(err)
		}
		md := "---\nname: Alpha\ndescription: First skill.\n---\nDo the first thing.\n"
		if err := os.WriteFile(filepath.Join(dir, "alpha", "SKILL.md"), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
		typo3 := []string{"--db", dbURL, "--typo3", dsn, "--typo3-sites", sites}
		skillCmd := func(sub string, args ...string) (int, string, string) {
			return cli(t, append(append([]string{"skill", sub}, typo3...), args...)...)
		}
		if code, out, stderr := skillCmd("list"); code != 0 { // and so migrates Waymark's database
			t.Fatalf("skill list beside TYPO3 = %d %q %q", code, out, stderr)
		}
		_, st := skillStore(t, dbURL)
		if err := st.SourcePut(context.Background(), skill.Source{UID: 3, Type: skill.Directory, Title: "Repo", Path: dir,
			Trust: skill.Verified, Enabled: true}); err != nil {
			t.Fatal(err)
		}
		if code, out, stderr := skillCmd("sync", "3"); code != 0 {
			t.Fatalf("skill sync beside TYPO3 = %d %q %q", code, out, stderr)
		}
		ks, err := st.List(context.Background(), 3)
		if err != nil || len(ks) != 1 {
			t.Fatalf("skills after sync = %+v, %v", ks, err)
		}
		uid, digest := fmt.Sprint(ks[0].UID), ks[0].Digest()
		if code, _, stderr := skillCmd("approve", "--as", "erika", uid, digest); code == 0 || !strings.Contains(stderr, "denied") {
			t.Errorf("approval by TYPO3's editor erika = %d %q, want denied", code, stderr)
		}
		if code, out, stderr := skillCmd("approve", "--as", "admin", uid, digest); code != 0 || !strings.Contains(out, "approved skill "+uid) {
			t.Fatalf("approval by TYPO3's admin = %d %q %q", code, out, stderr)
		}
		if ok, _, err := st.Instructs(context.Background(), ks[0].UID); err != nil || !ok {
			t.Fatalf("after the approval the skill instructs = %v, %v", ok, err)
		}
		if code, out, stderr := skillCmd("revoke", "--as", "admin", uid, digest); code != 0 || !strings.Contains(out, "revoked skill "+uid+" digest "+digest+" as admin") {
			t.Fatalf("revoke by TYPO3's admin = %d %q %q", code, out, stderr)
		}
		if ok, _, err := st.Instructs(context.Background(), ks[0].UID); err != nil || ok {
			t.Errorf("after the revocation the skill instructs = %v, %v", ok, err)
		}
	})
}

// `user disable` beside TYPO3 is refused with the sentence, as the HTTP
// administration answers 409 managed_elsewhere, and changes nothing in
// either database: it used to disable Waymark's row of a TYPO3 user, or
// call her "the last active administrator" of Waymark's empty directory.
func TestUserDisableBesideTYPO3IsRefusedAndChangesNothing(t *testing.T) {
	eachTYPO3DB(t, func(t *testing.T, dsn string, t3 *sql.DB) {
		sites, dbURL := besideTYPO3Demo(t, dsn)
		typo3 := []string{"--db", dbURL, "--typo3", dsn, "--typo3-sites", sites}
		// A token gives erika her row in Waymark's be_users.
		if code, _, stderr := cli(t, append(append([]string{"token"}, typo3...), "erika")...); code != 0 {
			t.Fatalf("token for TYPO3's erika = %d %q", code, stderr)
		}
		dbFile := strings.TrimPrefix(dbURL, "sqlite:")
		state := func() string {
			var b strings.Builder
			for _, u := range []string{"erika", "admin"} {
				var disable int
				if err := t3.QueryRow("SELECT disable FROM be_users WHERE username = '" + u + "'").Scan(&disable); err != nil {
					t.Fatalf("TYPO3's %s: %v", u, err)
				}
				fmt.Fprintf(&b, "typo3 %s disable=%d\n", u, disable)
			}
			w, err := sql.Open("sqlite", dbFile)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			rows, err := w.Query("SELECT uid, username, admin, disabled FROM be_users ORDER BY uid")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var uid int64
				var name string
				var admin, disabled bool
				if err := rows.Scan(&uid, &name, &admin, &disabled); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "waymark %d %s admin=%t disabled=%t\n", uid, name, admin, disabled)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "tokens %d\n", countRows(t, dbFile, "api_tokens"))
			return b.String()
		}
		before := state()
		for _, c := range []struct{ action, user string }{{"disable", "erika"}, {"disable", "admin"}, {"enable", "erika"}, {"disable", "nobody"}} {
			code, out, stderr := cli(t, append(append([]string{"user", c.action}, typo3...), c.user)...)
			if code != 1 || out != "" || !strings.Contains(stderr, "users are administered in TYPO3") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("user %s %s beside TYPO3 = %d %q %q, want exit 1 and one line saying users are administered in TYPO3", c.action, c.user, code, out, stderr)
			}
		}
		if after := state(); after != before {
			t.Errorf("the refused user commands changed\n%s\ninto\n%s", before, after)
		}
	})
}

// Every command that takes the TYPO3 options refuses --typo3-sites without
// --typo3, and the extension's options without TYPO3, as a usage error
// before it opens (or creates) Waymark's database: a command left out of
// the installation's options used to run on the built-in tables instead.
func TestTYPO3OptionsWithoutTYPO3AreAUsageErrorOnEveryCommandThatTakesThem(t *testing.T) {
	t.Setenv("WAYMARK_TYPO3", "")
	t.Setenv("WAYMARK_TYPO3_SITES", "")
	t.Setenv("WAYMARK_TYPO3_BRIDGE", "")
	t.Setenv("WAYMARK_TYPO3_BRIDGE_SECRET", "")
	t.Setenv("WAYMARK_TOKEN", "some-token")
	sites := t.TempDir()
	// What each command needs besides the options to reach its
	// installation: its subcommand, then what follows the options.
	args := map[string]struct{ sub, after []string }{
		"typo3": {sub: []string{"check"}}, "serve": {after: []string{"--addr", "127.0.0.1:0"}}, "worker": {},
		"import": {after: []string{"nothing.yaml"}}, "token": {after: []string{"erika"}}, "reap": {},
		"skill": {sub: []string{"list"}}, "user": {sub: []string{"disable"}, after: []string{"erika"}}, "mcp": {},
	}
	cmds := map[string]bool{}
	for _, o := range optionTable {
		if strings.HasPrefix(o.flag, "typo3") && o.flag != "typo3-password-login" && o.cmds != "bench" {
			for _, c := range strings.Fields(o.cmds) {
				cmds[c] = true
			}
		}
	}
	for _, want := range strings.Fields(installationCmds) {
		if !cmds[want] {
			t.Errorf("%s opens the installation but does not take the TYPO3 options", want)
		}
	}
	secret := strings.Repeat("s", 32)
	cases := []struct {
		opts []string
		want string
	}{
		{[]string{"--typo3-sites", sites}, "--typo3-sites needs --typo3 DSN"},
		{[]string{"--typo3-bridge", "http://127.0.0.1:1/", "--typo3-bridge-secret", secret}, "--typo3-bridge needs --typo3 DSN"},
		{[]string{"--typo3-bridge-secret", secret}, "--typo3-bridge-secret needs --typo3-bridge URL"},
	}
	for cmd := range cmds {
		extra, ok := args[cmd]
		if !ok {
			t.Errorf("command %s takes the TYPO3 options: add its arguments to this test", cmd)
			continue
		}
		for _, c := range cases {
			dbFile := filepath.Join(t.TempDir(), "waymark.db")
			line := append([]string{cmd}, extra.sub...)
			if cmd != "typo3" {
				line = append(line, "--db", "sqlite:"+dbFile)
			}
			line = append(append(line, c.opts...), extra.after...)
			want := c.want
			if cmd == "typo3" {
				want = "--typo3 DSN (or WAYMARK_TYPO3) is required"
			}
			code, out, stderr := cli(t, line...)
			first, _, _ := strings.Cut(stderr, "\n")
			if code != 2 || out != "" || !strings.Contains(first, want) {
				t.Errorf("waymark %s = %d %q %q, want exit 2 and %q", strings.Join(line, " "), code, out, stderr, want)
			}
			if _, err := os.Stat(dbFile); !os.IsNotExist(err) {
				t.Errorf("waymark %s created Waymark's database", strings.Join(line, " "))
			}
		}
	}
}
