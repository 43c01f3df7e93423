package typo3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"waymark/internal/typo3"
)

// Real is a TYPO3 13.4 installation made by TYPO3's own installer
// (../shared/typo3/setup.sh) with the Waymark extension installed
// (integrations/typo3/Tests/run.sh installs it), served by `php -S` for
// one test with a shared secret of its own.
type Real struct {
	Dir    string // the installation (vendor/, public/, config/, boot.php)
	Base   string // its site base URL, e.g. http://127.0.0.1:PORT/
	Secret string // WAYMARK_BRIDGE_SECRET of the server
	Sites  string // config/sites
	DB     *sql.DB
	URL    string // the database in typo3.Open's form
	typo3.Dialect
}

// RealMariaDB is the installation on MariaDB of WAYMARK_TEST_TYPO3_MARIADB
// (its folder), RealPostgres the one on PostgreSQL of
// WAYMARK_TEST_TYPO3_POSTGRES; without the variable the test is skipped
// (failed when CI is set: .ci/run makes both).
func RealMariaDB(t testing.TB) *Real { return real(t, "WAYMARK_TEST_TYPO3_MARIADB") }

// RealPostgres: see RealMariaDB.
func RealPostgres(t testing.TB) *Real { return real(t, "WAYMARK_TEST_TYPO3_POSTGRES") }

// EachReal runs fn as subtests "mariadb" and "postgres" on the real installations.
func EachReal(t *testing.T, fn func(t *testing.T, r *Real)) {
	t.Helper()
	t.Run("mariadb", func(t *testing.T) { fn(t, RealMariaDB(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, RealPostgres(t)) })
}

func real(t testing.TB, env string) *Real {
	t.Helper()
	dir := os.Getenv(env)
	if dir == "" {
		unavailable(t, "%s is not set: no TYPO3 made by its installer (../shared/typo3/setup.sh DIR, then integrations/typo3/Tests/run.sh DIR)", env)
	}
	if _, err := os.Stat(filepath.Join(dir, "vendor", "waymark", "typo3-waymark")); err != nil {
		unavailable(t, "%s=%s: the Waymark extension is not installed there (integrations/typo3/Tests/run.sh DIR installs it)", env, dir)
	}
	r := &Real{Dir: dir, Sites: filepath.Join(dir, "config", "sites"), Secret: "waymark-test-" + hex.EncodeToString(randomBytes(16))}
	var conn struct {
		Driver, Host, User, Password, DBName string
		Port                                 any
	}
	out := r.PHP(t, `$c = require getenv('T3_ROOT') . '/config/system/settings.php'; $d = $c['DB']['Connections']['Default'];
		echo json_encode(['Driver' => $d['driver'], 'Host' => $d['host'] ?? '127.0.0.1', 'User' => $d['user'] ?? '', 'Password' => $d['password'] ?? '',
		'DBName' => $d['dbname'], 'Port' => $d['port'] ?? '']);`, false)
	if err := json.Unmarshal([]byte(out), &conn); err != nil {
		t.Fatalf("%s: the database settings: %v (%s)", dir, err, out)
	}
	scheme, port := "mysql", fmt.Sprint(conn.Port)
	if strings.Contains(conn.Driver, "pgsql") || strings.Contains(conn.Driver, "postgres") {
		scheme = "postgres"
	}
	if port == "" || port == "<nil>" {
		port = map[string]string{"mysql": "3306", "postgres": "5432"}[scheme]
	}
	u := url.URL{Scheme: scheme, User: url.UserPassword(conn.User, conn.Password), Host: net.JoinHostPort(conn.Host, port), Path: "/" + conn.DBName}
	if conn.Password == "" {
		u.User = url.User(conn.User)
	}
	if scheme == "postgres" {
		u.RawQuery = "sslmode=disable"
	}
	r.URL = u.String()
	db, d, err := typo3.Open(context.Background(), r.URL)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	t.Cleanup(func() { db.Close() })
	r.DB, r.Dialect = db, d
	r.serve(t)
	return r
}

// serve starts `php -S` on a free port for the installation, with the
// test's secret, until the test ends.
func (r *Real) serve(t testing.TB) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	// PHP's opcode cache, on in every production PHP-FPM, is off for the
	// CLI by default: without it each request compiles TYPO3 anew.
	cmd := exec.Command("php", "-d", "opcache.enable_cli=1", "-S", addr, "-t", "public")
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "WAYMARK_BRIDGE_SECRET="+r.Secret, "PHP_CLI_SERVER_WORKERS=4", "TYPO3_CONTEXT=Development")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("php -S: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the workers too
		_ = cmd.Wait()
	})
	r.Base = "http://" + addr + "/"
	for i := 0; ; i++ {
		resp, err := http.Get(r.Base + "typo3/login")
		if err == nil {
			resp.Body.Close()
			return
		}
		if i > 100 {
			t.Fatalf("php -S %s does not answer: %v\n%s", addr, err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// PHP runs code with TYPO3 booted as its CLI does (boot.php: t3_as_user,
// t3_dh; BackendUtility, RecordHistory, … at hand) and returns its output.
func (r *Real) PHP(t testing.TB, code string, boot ...bool) string {
	t.Helper()
	prefix := "<?php\n"
	if len(boot) == 0 || boot[0] {
		prefix += "require getenv('T3_ROOT') . '/boot.php';\n"
	}
	f, err := os.CreateTemp("", "waymark-t3-*.php")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(prefix + code + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cmd := exec.Command("php", f.Name())
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "T3_ROOT="+r.Dir, "TYPO3_CONTEXT=Development")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("php: %v\n%s\n--- code:\n%s", err, out, code)
	}
	return strings.TrimSpace(string(out))
}

// Console runs TYPO3's CLI (vendor/bin/typo3) with args.
func (r *Real) Console(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command("php", append([]string{"vendor/bin/typo3"}, args...)...)
	cmd.Dir = r.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("typo3 %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Backend is a browser's session in TYPO3's backend.
type Backend struct {
	r    *Real
	HTTP *http.Client
	Main string // the backend's main page, as rendered after the login
}

// Login signs username in to TYPO3's backend through its own login form.
func (r *Real) Login(t testing.TB, username, password string) *Backend {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 60 * time.Second}
	page := get(t, c, r.Base+"typo3/login", "")
	m := regexp.MustCompile(`name="__RequestToken" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("TYPO3 login form without a request token")
	}
	form := url.Values{"login_status": {"login"}, "username": {username}, "userident": {password}, "__RequestToken": {m[1]}}
	resp, err := c.PostForm(r.Base+"typo3/login?loginProvider=1433416747", form)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(resp.Request.URL.Path, "/typo3/main") {
		t.Fatalf("TYPO3 login of %s ended at %s (%d)", username, resp.Request.URL, resp.StatusCode)
	}
	return &Backend{r: r, HTTP: c, Main: string(body)}
}

// Ticket opens the module "Waymark" for page and language as the signed-in
// user and returns the ticket of the sign-in link it renders.
func (b *Backend) Ticket(t testing.TB, page, language int64) string {
	t.Helper()
	main := strings.ReplaceAll(b.Main, "&amp;", "&")
	link := regexp.MustCompile(`/typo3/module/web/waymark\?token=[0-9a-f]+`).FindString(main)
	if link == "" {
		t.Fatalf("the backend's main page has no link to the module Waymark")
	}
	page2 := get(t, b.HTTP, fmt.Sprintf("%s%s&id=%d&language=%d&noredirect=1", strings.TrimSuffix(b.r.Base, "/"), link, page, language), b.r.Base+"typo3/main")
	m := regexp.MustCompile(`data-waymark-enter="([^"]+)"`).FindStringSubmatch(page2)
	if m == nil {
		t.Fatalf("the module Waymark rendered no sign-in link:\n%.600s", page2)
	}
	u, err := url.Parse(strings.ReplaceAll(m[1], "&amp;", "&"))
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("ticket")
}

// Logout ends the backend session through TYPO3's logout.
func (b *Backend) Logout(t testing.TB) {
	t.Helper()
	m := regexp.MustCompile(`"logoutUrl":"([^"]+)"`).FindStringSubmatch(b.Main)
	if m == nil {
		t.Fatalf("the backend's main page has no logout URL")
	}
	get(t, b.HTTP, strings.TrimSuffix(b.r.Base, "/")+strings.ReplaceAll(m[1], `\/`, "/"), b.r.Base+"typo3/main")
}

func get(t testing.TB, c *http.Client, u, referer string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if referer != "" {
		req.Header.Set("Referer", referer) // else TYPO3 answers with its referrer refresh page
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}
