package main

import (
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the README's option list from optionTable")

// commandLines are every command and subcommand with its own flag set, as
// `waymark help` asks them for -h.
func commandLines() [][]string {
	var out [][]string
	for _, c := range commands() {
		switch c.name {
		case "user":
			out = append(out, []string{"user", "disable"}, []string{"user", "enable"})
		case "skill":
			for _, sub := range []string{"sync", "list", "approve", "revoke"} {
				out = append(out, []string{"skill", sub})
			}
		default:
			out = append(out, []string{c.name})
		}
	}
	return out
}

// Every flag a command defines is a row of optionTable: `waymark CMD -h`
// lists exactly the table's rows of CMD (a flag defined outside the table
// is printed marked "not in the option table").
func TestEveryFlagOfEveryCommandIsInTheOptionTable(t *testing.T) {
	flagLine := regexp.MustCompile(`(?m)^  --([a-z0-9-]+)`)
	envLine := regexp.MustCompile(`(?m)^  env ([A-Z_]+) `)
	for _, cmd := range commandLines() {
		code, stdout, stderr := cli(t, append(cmd, "-h")...)
		if code != 0 || stdout != "" {
			t.Errorf("waymark %v -h = exit %d, stdout %q", cmd, code, stdout)
		}
		if strings.Contains(stderr, "not in the option table") {
			t.Errorf("waymark %v defines a flag outside optionTable:\n%s", cmd, stderr)
		}
		var got, want []string
		for _, m := range flagLine.FindAllStringSubmatch(stderr, -1) {
			got = append(got, "--"+m[1])
		}
		for _, m := range envLine.FindAllStringSubmatch(stderr, -1) {
			got = append(got, m[1])
		}
		for _, o := range optionsOf(strings.Join(cmd, " ")) {
			if o.flag != "" {
				want = append(want, "--"+o.flag)
			} else {
				want = append(want, o.envName())
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("waymark %v -h lists %v, optionTable %v", cmd, got, want)
		}
	}
}

// A command takes each flag and each variable once; every row names a
// config field whose type parses its default; every command of a row exists.
func TestOptionTableHasOneRowPerFlagAndCommand(t *testing.T) {
	known := map[string]bool{"*": true}
	for _, c := range commands() {
		known[c.name] = true
	}
	for _, o := range optionTable {
		for _, c := range strings.Fields(o.cmds) {
			if !known[c] {
				t.Errorf("option %s names unknown command %q", o.key(), c)
			}
		}
		if o.usage == "" || strings.Contains(o.usage, "`") {
			t.Errorf("option %s: usage %q is empty or has backquotes (flag.UnquoteUsage would read them as the value's name)", o.key(), o.usage)
		}
		if o.flag == "" && !o.secret {
			t.Errorf("option %s has no flag but is not a secret: give it a flag", o.key())
		}
	}
	for _, cmd := range commandLines() {
		name := strings.Join(cmd, " ")
		seen := map[string]bool{}
		for _, o := range optionsOf(name) {
			if seen[o.key()] || seen[o.envName()] {
				t.Errorf("waymark %s takes %s twice", name, o.key())
			}
			seen[o.key()], seen[o.envName()] = true, true
		}
		newFlags(name, nil) // panics on a field that does not exist or a default that does not parse
	}
}

// The options parse into the config: the command line wins over the
// variable, a bad value names the flag or the variable, and a secret's
// value is never repeated in an error.
func TestOptionsParseFromFlagsAndVariables(t *testing.T) {
	t.Setenv("WAYMARK_SHUTDOWN_TIMEOUT", "45s")
	t.Setenv("WAYMARK_TRUSTED_PROXIES", "10.0.0.0/8, 192.168.1.7")
	t.Setenv("WAYMARK_PURGE_EVERY", "1h")
	t.Setenv("WAYMARK_SECRET_KEY", "k")
	f := newFlags("serve", nil)
	if err := f.parse([]string{"--purge-every", "2h"}); err != nil {
		t.Fatal(err)
	}
	if f.ShutdownTimeout.String() != "45s" || f.PurgeEvery.String() != "2h0m0s" || f.TrustedProxies.String() != "10.0.0.0/8,192.168.1.7/32" || f.SecretKey != "k" {
		t.Errorf("serve parsed shutdown %v, purge every %v, proxies %v, key %q", f.ShutdownTimeout, f.PurgeEvery, f.TrustedProxies.String(), f.SecretKey)
	}
	if !f.given("purge-every") || !f.given("WAYMARK_SECRET_KEY") || f.given("lease") {
		t.Errorf("given: purge-every %v, WAYMARK_SECRET_KEY %v, lease %v; want true, true, false", f.given("purge-every"), f.given("WAYMARK_SECRET_KEY"), f.given("lease"))
	}
	for _, c := range []struct {
		args       []string
		env        string
		want, leak string
	}{
		{[]string{"--trusted-proxies", "10.0.0.0/33"}, "", `"10.0.0.0/33" is neither a CIDR`, ""},
		{nil, "WAYMARK_TRUSTED_PROXIES=proxy.example", "WAYMARK_TRUSTED_PROXIES", ""},
		{[]string{"--shutdown-timeout", "soon"}, "", "-shutdown-timeout", ""},
		{nil, "WAYMARK_LOG_LEVEL=loud", "WAYMARK_LOG_LEVEL", ""},
	} {
		t.Setenv("WAYMARK_TRUSTED_PROXIES", "")
		t.Setenv("WAYMARK_LOG_LEVEL", "")
		if k, v, ok := strings.Cut(c.env, "="); ok {
			t.Setenv(k, v)
		}
		code, _, stderr := cli(t, append([]string{"serve", "--db", "sqlite:" + filepath.Join(t.TempDir(), "w.db")}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("serve %v (env %s) = %d %q, want 2 and %q", c.args, c.env, code, stderr, c.want)
		}
	}
}

// The help's bug: `waymark help` printed "--workers waymark worker" because
// flag.UnquoteUsage took the backquoted text of the usage for the value's
// name, and `bench -h` said WAYMARK_BENCH_DB in its text and WAYMARK_DB as
// its variable.
func TestHelpNamesEveryValueByItsTypeAndBenchItsOwnVariable(t *testing.T) {
	_, out, _ := cli(t, "help")
	for _, bad := range []string{"waymark worker\n", "--worker-processes waymark", "`"} {
		if strings.Contains(out, bad) {
			t.Errorf("waymark help contains %q", bad)
		}
	}
	_, _, bench := cli(t, "bench", "-h")
	if !strings.Contains(bench, "  --db string\n") || !strings.Contains(bench, "env WAYMARK_BENCH_DB\n") || strings.Contains(bench, "env WAYMARK_DB") {
		t.Errorf("bench -h:\n%s\nwant --db with env WAYMARK_BENCH_DB and no WAYMARK_DB variable", bench)
	}
	_, _, serve := cli(t, "serve", "-h")
	if !strings.Contains(serve, "env WAYMARK_METRICS_TOKEN, secret\n") || !strings.Contains(serve, "env WAYMARK_SECRET_KEY (a variable only, secret)") {
		t.Errorf("serve -h does not mark the secrets:\n%s", serve)
	}
}

// waymark --version and -v print what waymark version prints.
func TestVersionFlagPrintsTheVersion(t *testing.T) {
	_, want, _ := cli(t, "version")
	for _, arg := range []string{"--version", "-version", "-v"} {
		if code, out, stderr := cli(t, arg); code != 0 || out != want {
			t.Errorf("waymark %s = %d %q %q, want 0 and %q", arg, code, out, stderr, want)
		}
	}
}

// The README's option list is optionTable's rendering; go test -run
// TestREADMEOptionListIsTheOptionTable -update rewrites it.
func TestREADMEOptionListIsTheOptionTable(t *testing.T) {
	const begin, end = "<!-- options: begin -->\n", "<!-- options: end -->"
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	before, rest, ok1 := strings.Cut(readme, begin)
	_, after, ok2 := strings.Cut(rest, end)
	if !ok1 || !ok2 {
		t.Fatalf("README has no %q … %q block", begin, end)
	}
	want := before + begin + optionsMarkdown() + end + after
	if *update {
		if err := os.WriteFile("../../README.md", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if readme != want {
		t.Errorf("README's option list differs from optionTable; run go test ./cmd/waymark -run TestREADMEOptionListIsTheOptionTable -update")
	}
}

// No part of the program reads the environment but flags.parse; the
// exceptions are named here with their reason.
func TestNoEnvironmentReadOutsideTheOptionTable(t *testing.T) {
	allowed := map[string]string{
		"cmd/waymark/config.go":                 "flags.parse: the option table's variables",
		"internal/tracing/tracing.go":           envExceptions["OTEL_*"],
		"internal/store/storetest/storetest.go": "test support: WAYMARK_TEST_POSTGRES, CI and WAYMARK_STORE_NO_FAST_PATHS of the test run",
		"internal/bench/cluster.go":             "the bench's children inherit the environment (PATH, OTEL_*) without its WAYMARK_ variables",
		"internal/typo3/typo3test/typo3test.go": "test support: WAYMARK_TEST_MARIADB, WAYMARK_TEST_POSTGRES and CI of the test run",
		"internal/typo3/typo3test/real.go":      "test support: WAYMARK_TEST_TYPO3_MARIADB and WAYMARK_TEST_TYPO3_POSTGRES, the real TYPO3 installations of the test run",
	}
	read := regexp.MustCompile(`\bos\.(Getenv|LookupEnv|Environ|ExpandEnv)\(|\bsyscall\.Getenv\(`)
	root := "../.."
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if read.Match(src) {
			if _, ok := allowed[filepath.ToSlash(rel)]; !ok {
				t.Errorf("%s reads the environment: make it an option of optionTable and pass it down", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The options as a log shows them: every value, a secret's never.
func TestLoggedOptionsNeverShowASecret(t *testing.T) {
	t.Setenv("WAYMARK_SECRET_KEY", "k-9f2c41d0e7")
	f := newFlags("serve", nil)
	if err := f.parse([]string{"--metrics-token", "m-77aa31c5", "--workers", "5"}); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("options", "options", f)
	line := b.String()
	if strings.Contains(line, "k-9f2c41d0e7") || strings.Contains(line, "m-77aa31c5") {
		t.Errorf("logged options show a secret: %s", line)
	}
	for _, want := range []string{`"workers":"5"`, `"metrics-token":"[set]"`, `"WAYMARK_SECRET_KEY":"[set]"`, `"db":"sqlite:waymark.db"`} {
		if !strings.Contains(line, want) {
			t.Errorf("logged options lack %s: %s", want, line)
		}
	}
}
