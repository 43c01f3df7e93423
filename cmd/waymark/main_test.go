package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// cli runs the command line in-process and returns exit code and outputs.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runCLI(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestBadInputExitsNonZeroWithOneLineReason(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("users: [{uid: 1, username: x, bogus: 1}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := "sqlite:" + filepath.Join(dir, "w.db")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"db url that does not parse", []string{"migrate", "--db", "mysql://x"}, "bad database URL"},
		{"unknown flag", []string{"migrate", "--nope"}, "flag provided but not defined"},
		{"import without files", []string{"import", "--db", db}, "no fixture file"},
		{"import of a missing file", []string{"import", "--db", db, filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		{"import of a bad file", []string{"import", "--db", db, bad}, "bogus"},
		{"token for an unknown user", []string{"token", "--db", db, "nobody"}, `no user "nobody"`},
		{"token without a user", []string{"token", "--db", db}, "USERNAME"},
		{"bad listen address", []string{"serve", "--db", db, "--addr", "nohost"}, "--addr"},
		{"negative retention", []string{"purge", "--db", db, "--older-than", "-1h"}, "retention windows must be positive"},
		{"retention that does not parse", []string{"purge", "--db", db, "--older-than", "soon"}, "invalid value"},
		{"worker without workers", []string{"worker", "--db", db, "--workers", "0"}, "--workers must be 1 or more"},
		{"reap on a bad url", []string{"reap", "--db", "sqlite:"}, "bad database URL"},
		{"demo on a bad address", []string{"demo", "--addr", ":::"}, "--addr"},
		{"purge every 10ms", []string{"worker", "--db", db, "--purge-every", "10ms"}, "--purge-every must be 0 (never) or at least 1s"},
		{"negative retention of serve", []string{"serve", "--db", db, "--older-than", "-1h"}, "retention windows must be positive"},
		{"malformed trusted proxy", []string{"serve", "--db", db, "--trusted-proxies", "10.0.0.0/8,10.0.0/33"}, `"10.0.0/33" is neither a CIDR`},
		{"malformed trusted proxy of the demo", []string{"demo", "--trusted-proxies", "proxy"}, `"proxy" is neither a CIDR`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := cli(t, c.args...)
			if code == 0 {
				t.Fatalf("waymark %v exited 0", c.args)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q does not contain %q", stderr, c.want)
			}
			// Log lines (JSON, e.g. a generated secret key) may come first; the reason is one line.
			var reasons []string
			for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if !strings.HasPrefix(l, `{"time":`) && !strings.HasPrefix(l, "usage: ") {
					reasons = append(reasons, l)
				}
			}
			if len(reasons) != 1 || !strings.HasPrefix(reasons[0], "waymark") {
				t.Errorf("stderr %q: want one reason line starting with waymark", stderr)
			}
		})
	}
}

func TestUnreachableDatabaseFailsWithin10sNamingTheAddress(t *testing.T) {
	start := time.Now()
	code, _, stderr := cli(t, "migrate", "--db", "postgres://nobody@127.0.0.1:1/x")
	if code == 0 {
		t.Fatal("migrate against an unreachable server exited 0")
	}
	if !strings.Contains(stderr, "127.0.0.1:1") {
		t.Errorf("stderr %q does not name the address", stderr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v, want under 10s", d)
	}
}

func TestImportIsIdempotentAndTokenWorks(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "w.db")
	fx := filepath.Join(dir, "f.yaml")
	doc := "languages: [{uid: 0, title: English, locale: en}]\n" +
		"groups: [{uid: 1, title: Editors, tablesSelect: [pages], tablesModify: [pages], nonExcludeFields: [], languages: [0], mounts: [1], subgroups: []}]\n" +
		"users: [{uid: 7, username: erika, password: secret-pass, groups: [1], backendLanguage: de}]\n" +
		"pages: [{uid: 1, pid: 0, title: Home, language: 0, owner: 7, group: 1, perms: {user: 31, group: 27, everybody: 0}, fields: {description: ''}}]\n"
	if err := os.WriteFile(fx, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if code, out, stderr := cli(t, "import", "--db", db, fx); code != 0 || !strings.Contains(out, "users 1") {
			t.Fatalf("import #%d = %d, out %q, err %q", i+1, code, out, stderr)
		}
	}
	code, out, stderr := cli(t, "token", "--db", db, "erika")
	if code != 0 || !regexp.MustCompile(`^wm_[A-Za-z0-9_-]{20,}\n$`).MatchString(out) {
		t.Fatalf("token = %d, %q, %q", code, out, stderr)
	}
}

// The CLI twin of disabling a user in the administration API.
func TestUserDisableAndEnable(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "w.db")
	fx := filepath.Join(dir, "site.yaml")
	doc := "users: [{uid: 1, username: root, admin: true}, {uid: 7, username: erika}]\n"
	if err := os.WriteFile(fx, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := cli(t, "import", "--db", db, fx); code != 0 {
		t.Fatalf("import = %d, %q", code, stderr)
	}
	if code, out, stderr := cli(t, "user", "disable", "--db", db, "erika"); code != 0 || out != "user erika disabled\n" {
		t.Fatalf("user disable = %d, %q, %q", code, out, stderr)
	}
	if code, _, stderr := cli(t, "token", "--db", db, "erika"); code == 0 || !strings.Contains(stderr, "disabled") {
		t.Errorf("token for a disabled user = %d, %q, want refused as disabled", code, stderr)
	}
	if code, _, stderr := cli(t, "user", "disable", "--db", db, "root"); code == 0 || !strings.Contains(stderr, "last active administrator") {
		t.Errorf("disabling the last admin = %d, %q, want refused", code, stderr)
	}
	if code, out, _ := cli(t, "user", "enable", "--db", db, "erika"); code != 0 || out != "user erika enabled\n" {
		t.Errorf("user enable = %d, %q", code, out)
	}
	if code, _, stderr := cli(t, "token", "--db", db, "erika"); code != 0 {
		t.Errorf("token after enabling = %d, %q", code, stderr)
	}
	for _, args := range [][]string{{"user"}, {"user", "delete", "erika"}, {"user", "disable", "--db", db}, {"user", "disable", "--db", db, "nobody"}} {
		if code, _, _ := cli(t, args...); code == 0 {
			t.Errorf("%v exited 0, want non-zero", args)
		}
	}
}

// TestDemoServesHealthAndMe is the "done means": the demo serves,
// /healthz answers, a demo token reaches /api/me, a wrong token gets 401.
func TestPurgeAndReapOnAnEmptyDatabase(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "w.db")
	if code, out, stderr := cli(t, "purge", "--db", db); code != 0 || !strings.Contains(out, "purged 0 runs") {
		t.Fatalf("purge = %d %q %q", code, out, stderr)
	}
	if code, out, stderr := cli(t, "reap", "--db", db); code != 0 || !strings.Contains(out, "requeued 0, dead-lettered 0") {
		t.Fatalf("reap = %d %q %q", code, out, stderr)
	}
}

func TestDemoServesHealthAndMe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		var errb bytes.Buffer
		done <- runCLI(ctx, []string{"demo", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "demo.db")}, pw, &errb)
		pw.Close()
	}()
	// The first line names the URL.
	buf := make([]byte, 4096)
	n, err := pr.Read(buf)
	if err != nil {
		t.Fatalf("read demo output: %v", err)
	}
	go io.Copy(io.Discard, pr)
	m := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(string(buf[:n]))
	if m == "" {
		t.Fatalf("demo printed no URL: %q", buf[:n])
	}
	get := func(path, token string) (int, string) {
		req, _ := http.NewRequest("GET", m+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz", ""); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
	if code, body := get("/api/me", "demo-token-erika"); code != 200 || !strings.Contains(body, `"username":"erika"`) {
		t.Errorf("/api/me with erika's token = %d %s", code, body)
	}
	if code, body := get("/api/me", "wrong-token-123"); code != 401 || !strings.Contains(body, `"error"`) {
		t.Errorf("/api/me with a wrong token = %d %s", code, body)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("demo exited %d after shutdown", code)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("demo did not shut down")
	}
}

// --workers and --chat-workers are checked alike on every command that
// takes them, as a usage error, before the database or a secret key is
// made.
func TestWorkerCountsAreCheckedAlikeOnEveryCommandBeforeAnythingIsWritten(t *testing.T) {
	t.Setenv("WAYMARK_TOKEN", "a-token-checked-later")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--workers", "-1"}, "--workers must be 0 or more"},
		{[]string{"mcp", "--workers", "-1"}, "--workers must be 0 or more"},
		{[]string{"worker", "--workers", "0"}, "--workers must be 1 or more"},
		{[]string{"serve", "--chat-workers", "-1"}, "--chat-workers must be 0 or more"},
		{[]string{"mcp", "--chat-workers", "-1"}, "--chat-workers must be 0 or more"},
		{[]string{"worker", "--chat-workers", "-1"}, "--chat-workers must be 0 or more"},
		{[]string{"mcp", "--workers", "0", "--chat-workers", "3"}, "--chat-workers needs --workers above 0"},
	} {
		dir := t.TempDir()
		args := append(c.args, "--db", "sqlite:"+filepath.Join(dir, "w.db"), "--data-dir", dir)
		code, _, stderr := cli(t, args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("waymark %v = %d %q, want usage error %q", c.args, code, stderr, c.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("waymark %v wrote %s before refusing", c.args, entries[0].Name())
		}
	}
}
