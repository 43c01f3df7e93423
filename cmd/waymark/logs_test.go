package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"waymark/internal/clock"
	"waymark/internal/run"
)

// running is a serve or worker command running in-process.
type running struct {
	stdout *lockedWriter
	mu     sync.Mutex // guards lines
	lines  []string   // stderr, line by line
}

type lockedWriter struct {
	mu sync.Mutex // guards b
	b  strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// stderr returns what the command wrote on stderr so far.
func (r *running) stderr() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// startCommand runs waymark args until the test ends, and waits until it
// logged the record msg; it returns that record.
func startCommand(t *testing.T, msg string, args ...string) (*running, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	r := &running{stdout: &lockedWriter{}}
	done := make(chan int, 1)
	go func() {
		done <- runCLI(ctx, args, r.stdout, pw)
		pw.Close()
	}()
	found := make(chan map[string]any, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			r.mu.Lock()
			r.lines = append(r.lines, sc.Text())
			r.mu.Unlock()
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == msg {
				found <- rec
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("waymark %v exited %d: %s", args, code, strings.Join(r.stderr(), "\n"))
			}
		case <-time.After(30 * time.Second):
			t.Errorf("waymark %v did not stop", args)
		}
	})
	select {
	case rec := <-found:
		return r, rec
	case code := <-done:
		t.Fatalf("waymark %v exited %d before logging %q: %s", args, code, msg, strings.Join(r.stderr(), "\n"))
	case <-time.After(60 * time.Second):
		t.Fatalf("waymark %v logged no %q within 60 s: %s", args, msg, strings.Join(r.stderr(), "\n"))
	}
	return nil, nil
}

// serve and worker log JSON only: the banner is a log record naming the
// URL (serve) and the database, not a line of text among the records.
func TestServeAndWorkerLogOnlyJSONBannerIncluded(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "w.db")
	srv, rec := startCommand(t, "waymark serving", "serve", "--db", db, "--addr", "127.0.0.1:0", "--workers", "0")
	if url, _ := rec["url"].(string); !strings.HasPrefix(url, "http://127.0.0.1:") || rec["ui"] != url+"/login" || rec["db"] == nil {
		t.Errorf("serve's banner record = %v, want url, ui and db", rec)
	}
	wrk, rec := startCommand(t, "waymark worker running", "worker", "--db", db, "--workers", "1")
	if rec["workers"] != 1.0 || rec["db"] == nil {
		t.Errorf("worker's banner record = %v, want workers 1 and db", rec)
	}
	for name, r := range map[string]*running{"serve": srv, "worker": wrk} {
		if out := r.stdout.String(); out != "" {
			t.Errorf("%s wrote on stdout: %q", name, out)
		}
		for _, l := range r.stderr() {
			if !json.Valid([]byte(l)) {
				t.Errorf("%s logged a line that is not JSON: %q", name, l)
			}
		}
	}
}

// --purge-every deletes an expired finished run with no purge run by hand:
// one finished before the worker started, and one made after it started
// (so by a later scheduled purge, not the one at start).
func TestPurgeEveryDeletesAnExpiredFinishedRunWithoutAHandRunPurge(t *testing.T) {
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "w.db")
	db, err := newFlags("migrate", io.Discard).openDB(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	longAgo := clock.NewFake(time.Now().Add(-48 * time.Hour))
	finished := func() string {
		t.Helper()
		ctx, runs, id := context.Background(), run.NewStore(db, longAgo), uuid.NewString()
		if err := runs.Create(ctx, run.Run{UUID: id, Configuration: 3, Initiator: 7, Status: run.StatusQueued, Request: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		if won, err := runs.Claim(ctx, id, "worker:gone", time.Minute); !won || err != nil {
			t.Fatalf("claim: %v %v", won, err)
		}
		if won, err := runs.Settle(ctx, id, run.Settlement{Owner: "worker:gone", Status: run.StatusCompleted, Reason: run.ReasonCompleted}); !won || err != nil {
			t.Fatalf("settle: %v %v", won, err)
		}
		return id
	}
	waitGone := func(id, what string) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			var n int
			if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM runs WHERE uuid = ?", id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the run finished 48 h ago is still there after 20 s", what)
			}
		}
	}
	before := finished()
	wrk, _ := startCommand(t, "waymark worker running", "worker", "--db", dbURL, "--workers", "1", "--purge-every", "1s", "--older-than", "24h")
	waitGone(before, "purge at start")
	after := finished()
	waitGone(after, "scheduled purge")
	// The purge logs after its commit: the line may follow the run's deletion.
	var purged int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		purged = 0
		for _, l := range wrk.stderr() {
			var rec map[string]any
			if json.Unmarshal([]byte(l), &rec) == nil && rec["msg"] == "purged" && rec["runs"] == 1.0 {
				purged++
			}
		}
		if purged >= 2 || time.Now().After(deadline) {
			break
		}
	}
	if purged != 2 {
		t.Errorf("the worker logged %d purges of one run, want 2: %v", purged, wrk.stderr())
	}
}
