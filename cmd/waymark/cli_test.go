package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Waymark help and waymark CMD -h print every flag with
// its environment variable and default.
func TestHelpPrintsEveryFlagWithItsEnvironmentVariableAndDefault(t *testing.T) {
	code, out, _ := cli(t, "help")
	if code != 0 {
		t.Fatalf("waymark help exited %d", code)
	}
	for _, want := range []string{
		"usage: waymark serve [flags]", "--workers int", "env WAYMARK_WORKERS, default \"2\"",
		"--db string", "env WAYMARK_DB", "--log-level", "env WAYMARK_LOG_LEVEL",
		"usage: waymark skill approve [flags]", "env WAYMARK_AS", "usage: waymark user disable [flags]",
		"version",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("waymark help lacks %q", want)
		}
	}
	for _, cmd := range []string{"user", "skill", "migrate", "version"} {
		if code, _, stderr := cli(t, cmd, "-h"); code != 0 || !strings.Contains(stderr, "env WAYMARK_LOG_LEVEL") {
			t.Errorf("waymark %s -h = %d %q", cmd, code, stderr)
		}
	}
	code, _, stderr := cli(t, "serve", "-h")
	if code != 0 || !strings.Contains(stderr, "--addr string") || !strings.Contains(stderr, `env WAYMARK_ADDR, default "127.0.0.1:8080"`) {
		t.Errorf("waymark serve -h = %d %q", code, stderr)
	}
}

// Every flag is settable from the environment; the
// command line wins; a bad value names the variable.
func TestEveryFlagIsSettableFromTheEnvironment(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "w.db")
	t.Setenv("WAYMARK_WORKERS", "0")
	code, _, stderr := cli(t, "worker", "--db", db)
	if code == 0 || !strings.Contains(stderr, "--workers must be 1 or more") {
		t.Errorf("worker with WAYMARK_WORKERS=0 = %d %q", code, stderr)
	}
	t.Setenv("WAYMARK_OLDER_THAN", "soon")
	code, _, stderr = cli(t, "purge", "--db", db)
	if code != 2 || !strings.Contains(stderr, `WAYMARK_OLDER_THAN="soon"`) {
		t.Errorf("purge with WAYMARK_OLDER_THAN=soon = %d %q", code, stderr)
	}
	code, out, stderr := cli(t, "purge", "--db", db, "--older-than", "1h")
	if code != 0 {
		t.Errorf("purge with the flag over a bad env = %d %q %q", code, out, stderr)
	}
	t.Setenv("WAYMARK_LOG_LEVEL", "loud")
	if code, _, stderr := cli(t, "migrate", "--db", db); code != 2 || !strings.Contains(stderr, "WAYMARK_LOG_LEVEL") {
		t.Errorf("migrate with WAYMARK_LOG_LEVEL=loud = %d %q", code, stderr)
	}
}

// Waymark version prints module version, commit and Go version.
func TestVersionPrintsModuleCommitAndGo(t *testing.T) {
	code, out, stderr := cli(t, "version")
	if code != 0 || !strings.HasPrefix(out, "waymark ") || !strings.Contains(out, "commit ") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("waymark version = %d %q %q", code, out, stderr)
	}
}

// A missing folder for the SQLite file is named in the error.
func TestMissingSQLiteFolderIsNamed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nowhere")
	code, _, stderr := cli(t, "migrate", "--db", "sqlite:"+filepath.Join(dir, "w.db"))
	if code == 0 || !strings.Contains(stderr, "the folder "+dir+" does not exist") {
		t.Errorf("migrate into a missing folder = %d %q", code, stderr)
	}
}

// startDemo runs waymark demo with args until it has printed everything
// up to "Stop with Ctrl-C." and returns that and a function that stops it.
func startDemo(t *testing.T, args ...string) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var errb bytes.Buffer
	go func() {
		done <- runCLI(ctx, append([]string{"demo", "--addr", "127.0.0.1:0"}, args...), pw, &errb)
		pw.Close()
	}()
	var printed strings.Builder
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		printed.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "Stop with") {
			break
		}
	}
	go io.Copy(io.Discard, pr)
	return printed.String(), func() {
		t.Helper()
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Fatalf("demo %v exited %d: %s", args, code, errb.String())
			}
		case <-time.After(15 * time.Second):
			t.Fatal("demo did not shut down")
		}
	}
}

// --db takes sqlite:PATH in demo as everywhere, and demo on
// an existing database keeps what is there.
func TestDemoTakesSqliteURLAndKeepsAnExistingDatabase(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "demo.db")
	first, stop := startDemo(t, "--db", db)
	stop()
	if !strings.Contains(first, "Demo site imported") {
		t.Fatalf("first demo: %q", first)
	}
	if code, _, stderr := cli(t, "user", "disable", "--db", db, "erika"); code != 0 {
		t.Fatalf("disable erika: %s", stderr)
	}
	second, stop := startDemo(t, "--db", db)
	defer stop()
	if !strings.Contains(second, "Existing database kept") {
		t.Errorf("second demo: %q", second)
	}
	// erika stays disabled: the demo site was not imported over the change.
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(second)
	req, _ := http.NewRequest("GET", url+"/api/me", nil)
	req.Header.Set("Authorization", "Bearer demo-token-erika")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/api/me with disabled erika's token after a second demo = %d, want 401", resp.StatusCode)
	}
}

// waymark --version prints what waymark version prints.
func TestDashDashVersionPrintsTheVersionLine(t *testing.T) {
	_, want, _ := cli(t, "version")
	code, out, stderr := cli(t, "--version")
	if code != 0 || out != want || !strings.HasPrefix(out, "waymark ") {
		t.Errorf("waymark --version = %d %q %q, want %q", code, out, stderr, want)
	}
}

// Regression: help showed "--workers waymark worker", taking the
// back-quoted command of the usage text for the argument's name.
func TestServeHelpNamesTheWorkersArgumentByItsType(t *testing.T) {
	code, _, stderr := cli(t, "serve", "-h")
	if code != 0 || !strings.Contains(stderr, "--workers int\n") || strings.Contains(stderr, "--workers waymark") ||
		!strings.Contains(stderr, "--cpuprofile FILE\n") {
		t.Errorf("waymark serve -h = %d %q", code, stderr)
	}
	if _, _, stderr := cli(t, "bench", "-h"); !strings.Contains(stderr, "--worker-processes int\n") {
		t.Errorf("waymark bench -h = %q, want --worker-processes int", stderr)
	}
}

// /healthz and waymark_build_info of a running server name the build that
// waymark version prints.
func TestHealthzAndBuildInfoNameTheBuildWaymarkVersionPrints(t *testing.T) {
	_, line, _ := cli(t, "version")
	m := regexp.MustCompile(`^waymark (\S+) \(commit (\S+), `).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("waymark version = %q", line)
	}
	printed, stop := startDemo(t)
	defer stop()
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(printed)
	get := func(path string) string {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	var health map[string]string
	if err := json.Unmarshal([]byte(get("/healthz")), &health); err != nil || health["version"] != m[1] || health["commit"] != m[2] {
		t.Errorf("/healthz = %v (%v), want version %s and commit %s", health, err, m[1], m[2])
	}
	if want := `waymark_build_info{commit="` + m[2] + `",goversion="` + runtime.Version() + `",version="` + m[1] + `"} 1`; !strings.Contains(get("/metrics"), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}

// The demo refuses a guide branch size or an open-runs cap out of range
// with a usage error, before it makes a database or listens.
func TestDemoRefusesABranchSizeOrOpenRunsCapOutOfRange(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--demo-pages", "-1"}, "--demo-pages must be 0 to 5000"},
		{[]string{"--demo-pages", "5001"}, "--demo-pages must be 0 to 5000"},
		{[]string{"--max-open-runs", "0"}, "--max-open-runs must be 1 or more"},
	} {
		db := filepath.Join(t.TempDir(), "demo.db")
		code, _, stderr := cli(t, append([]string{"demo", "--addr", "127.0.0.1:0", "--db", db}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("demo %v = %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Errorf("demo %v made its database (%v)", c.args, err)
		}
	}
}
