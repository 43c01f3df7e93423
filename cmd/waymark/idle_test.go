//go:build !race

// The race detector multiplies the CPU time of every loop it watches, so
// this measure runs without it (.ci/run runs it in its step without -race).

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"waymark/internal/store/storetest"
)

// An installation with nothing to do costs next to nothing: `serve` with its
// in-process workers on SQLite, and on PostgreSQL `serve --workers 0` beside
// a `worker` process, each use less than 1 % of a core over 20 s of idling.
func TestAnIdleServeAndWorkerUseUnderOnePercentOfACore(t *testing.T) {
	const idle = 20 * time.Second
	measure := func(t *testing.T, procs map[string]*exec.Cmd) {
		time.Sleep(3 * time.Second) // past the start: migrations, the first polls
		before := map[string]time.Duration{}
		for name, c := range procs {
			before[name] = cpuTime(t, c.Process.Pid)
		}
		time.Sleep(idle)
		for name, c := range procs {
			used := cpuTime(t, c.Process.Pid) - before[name]
			share := float64(used) / float64(idle) * 100
			t.Logf("%s: %v of CPU in %v idle (%.2f %% of a core)", name, used, idle, share)
			if share >= 1 {
				t.Errorf("%s used %.2f %% of a core while idle, want under 1 %%", name, share)
			}
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		serve := startIdle(t, "waymark serving", "serve", "--db", "sqlite:"+filepath.Join(dir, "w.db"), "--data-dir", dir, "--addr", "127.0.0.1:0")
		measure(t, map[string]*exec.Cmd{"serve (2 in-process workers)": serve})
	})
	t.Run("postgres", func(t *testing.T) {
		db, dir := storetest.PostgresURL(t), t.TempDir()
		serve := startIdle(t, "waymark serving", "serve", "--db", db, "--data-dir", dir, "--workers", "0", "--addr", "127.0.0.1:0")
		worker := startIdle(t, "waymark worker running", "worker", "--db", db, "--data-dir", dir)
		measure(t, map[string]*exec.Cmd{"serve --workers 0": serve, "worker": worker})
	})
}

// startIdle starts the test binary as waymark with args and waits for the
// log line ready; the process is killed when the test ends.
func startIdle(t *testing.T, ready string, args ...string) *exec.Cmd {
	t.Helper()
	c := exec.Command(benchExe, args...)
	c.Env = append(os.Environ(), benchEnv...)
	var mu sync.Mutex
	var log bytes.Buffer
	c.Stderr = writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return log.Write(p) })
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Signal(syscall.SIGKILL); _ = c.Wait() })
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		up, text := strings.Contains(log.String(), ready), log.String()
		mu.Unlock()
		if up {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("waymark %v did not log %q:\n%s", args, ready, text)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// cpuTime is the user and system CPU time process pid has used
// (/proc/PID/stat, in the kernel's USER_HZ of 100 ticks a second).
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The command name (field 2) may hold spaces: count from its closing parenthesis.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
