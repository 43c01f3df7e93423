package main

import (
	"context"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"

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
	}
	for _, c := range cases {
		code, stdout, stderr := cli(t, append([]string{"bench"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) || stdout != "" {
			t.Errorf("bench %v = exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}
