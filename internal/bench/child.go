package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is a waymark process this run started.
type child struct {
	name string
	cmd  *exec.Cmd
	url  string // the server's base URL (serve only)
	out  *lockedBuffer
	done chan struct{} // closed when the process has exited
	err  error         // the exit error, set before done closes
}

// lockedBuffer collects a child's output; mu guards buf.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return tail(&b.buf)
}

// lines returns the lines of the output that contain every one of subs.
func (b *lockedBuffer) lines(subs ...string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for l := range strings.Lines(b.buf.String()) {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(l, s)
		}
		if all {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// readyRecord is the log record serve and worker write once they run:
// "waymark serving" with the server's base URL, "waymark worker running".
type readyRecord struct {
	Msg string `json:"msg"`
	URL string `json:"url"`
}

// startChild starts `exe args…` and waits until it logged that it runs
// (readyRecord).
func startChild(ctx context.Context, exe string, env []string, args ...string) (*child, error) {
	c := &child{name: args[0], out: &lockedBuffer{}, done: make(chan struct{})}
	c.cmd = exec.Command(exe, args...)
	c.cmd.Env = env
	c.cmd.Stdout = c.out
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", c.name, err)
	}
	ready := make(chan readyRecord, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			fmt.Fprintln(c.out, sc.Text())
			var r readyRecord
			if !sent && json.Unmarshal(sc.Bytes(), &r) == nil && (r.Msg == "waymark serving" || r.Msg == "waymark worker running") {
				ready <- r
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	timer := time.NewTimer(2 * time.Minute)
	defer timer.Stop()
	select {
	case r := <-ready:
		if c.name == "serve" {
			if c.url = r.URL; c.url == "" {
				c.stop()
				return nil, fmt.Errorf("serve logged no URL: %s", c.out)
			}
		}
		return c, nil
	case <-c.done:
		return nil, fmt.Errorf("%s exited before it was ready (%v): %s", c.name, c.err, c.out)
	case <-timer.C:
		c.stop()
		return nil, fmt.Errorf("%s was not ready within 2 minutes: %s", c.name, c.out)
	case <-ctx.Done():
		c.stop()
		return nil, ctx.Err()
	}
}

// stop ends the child with SIGTERM, or SIGKILL after 30 s; stopping twice is harmless.
func (c *child) stop() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// terminate ends the child with SIGTERM and waits until it exited: an
// error when it did not within limit (it is then killed) or exited with a
// failure.
func (c *child) terminate(limit time.Duration) error {
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("SIGTERM to %s: %w", c.name, err)
	}
	select {
	case <-c.done:
	case <-time.After(limit):
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("%s pid %d did not exit within %v of SIGTERM", c.name, c.cmd.Process.Pid, limit)
	}
	if c.err != nil {
		return fmt.Errorf("%s pid %d exited after SIGTERM: %w: %s", c.name, c.cmd.Process.Pid, c.err, c.out)
	}
	return nil
}

// counts are a process's store counters: commits and statements.
type counts struct{ commits, statements int64 }

func (c counts) minus(d counts) counts {
	return counts{c.commits - d.commits, c.statements - d.statements}
}

// stopAndCount stops a worker and returns the counts it reported on its way out.
func (c *child) stopAndCount() (counts, error) {
	c.stop()
	c.out.mu.Lock()
	text := c.out.buf.String()
	c.out.mu.Unlock()
	for _, line := range strings.Split(text, "\n") {
		var rec struct {
			Commits    *int64 `json:"commits"`
			Statements int64  `json:"statements"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Commits != nil {
			return counts{*rec.Commits, rec.Statements}, nil
		}
	}
	return counts{}, fmt.Errorf("the worker did not log its commits on exit: %s", c.out)
}

// serverCounts reads the server's waymark_db_commits_total and
// waymark_db_statements_total from /metrics.
func serverCounts(ctx context.Context, client *http.Client, base string) (counts, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return counts{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return counts{}, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return counts{}, fmt.Errorf("metrics: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return counts{}, fmt.Errorf("metrics: status %d", resp.StatusCode)
	}
	var n counts
	found := 0
	for _, line := range strings.Split(string(body), "\n") {
		for name, into := range map[string]*int64{"waymark_db_commits_total ": &n.commits, "waymark_db_statements_total ": &n.statements} {
			if v, ok := strings.CutPrefix(line, name); ok {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					return counts{}, fmt.Errorf("metrics: %s: %w", name, err)
				}
				*into = int64(f)
				found++
			}
		}
	}
	if found != 2 {
		return counts{}, errors.New("metrics: no waymark_db_commits_total and waymark_db_statements_total")
	}
	return n, nil
}

// peakRSS is the peak resident set (VmHWM) of process pid in KiB.
func peakRSS(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("peak RSS of the server: %w", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, errors.New("peak RSS of the server: no VmHWM in /proc status")
}

// cpuTime is the CPU time (user and system) process pid has used so far,
// from /proc/PID/stat in clock ticks of 1/100 s (USER_HZ on Linux).
func cpuTime(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("CPU time of the server: %w", err)
	}
	// The command name (field 2) may hold spaces; the fields after it are plain.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, errors.New("CPU time of the server: no command name in /proc stat")
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("CPU time of the server: short /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("CPU time of the server: %w", err)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}
