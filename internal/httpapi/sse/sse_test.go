package sse_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waymark/internal/httpapi/sse"
)

// evlog is an append-only list of events with ids 1, 2, 3 …, the shape of a
// run's event stream; Source yields those after the last id.
type evlog struct {
	mu     sync.Mutex // guards events and closed
	events []string
	closed bool
}

func (l *evlog) add(data string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, data)
}

func (l *evlog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
}

func (l *evlog) source(ctx context.Context, lastID string) ([]sse.Event, sse.Step, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	after, _ := strconv.Atoi(lastID)
	var out []sse.Event
	for i := after; i < len(l.events); i++ {
		out = append(out, sse.Event{ID: strconv.Itoa(i + 1), Name: "note", Data: []byte(l.events[i])})
	}
	if l.closed && len(out) == 0 {
		return []sse.Event{{Name: "end", Data: []byte("{}")}}, sse.End, nil
	}
	return out, sse.Wait, nil
}

// serve starts a server whose one route streams src with cfg, resuming from
// the request's Last-Event-ID.
func serve(t *testing.T, cfg sse.Config, src sse.Source) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, err := sse.Open(w, cfg)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotAcceptable)
			return
		}
		st.Run(r.Context(), sse.LastEventID(r), src)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// client is one open stream, read line by line.
type client struct {
	resp  *http.Response
	lines chan string
}

func connect(t *testing.T, url, lastID string) *client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	c := &client{resp: resp, lines: make(chan string, 100)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	return c
}

// until reads lines until one satisfies ok, failing after five seconds; it
// returns the lines read, that one included.
func (c *client) until(t *testing.T, what string, ok func(string) bool) []string {
	t.Helper()
	var got []string
	deadline := time.After(5 * time.Second)
	for {
		select {
		case line, open := <-c.lines:
			if !open {
				t.Fatalf("stream ended before %s; read %q", what, got)
			}
			got = append(got, line)
			if ok(line) {
				return got
			}
		case <-deadline:
			t.Fatalf("no %s within 5s; read %q", what, got)
		}
	}
}

// ended fails unless the stream ends within five seconds.
func (c *client) ended(t *testing.T, what string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case _, open := <-c.lines:
			if !open {
				return
			}
		case <-deadline:
			t.Fatalf("stream did not end after %s", what)
		}
	}
}

func is(want string) func(string) bool { return func(l string) bool { return l == want } }

func TestStreamOpensWithHeadersAndRetryLine(t *testing.T) {
	srv := serve(t, sse.Config{Poll: 10 * time.Millisecond, Retry: 1500 * time.Millisecond}, (&evlog{}).source)
	c := connect(t, srv.URL, "")
	for h, want := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"} {
		if got := c.resp.Header.Get(h); got != want {
			t.Errorf("header %s = %q, want %q", h, got, want)
		}
	}
	if got := c.until(t, "a first line", func(string) bool { return true }); got[0] != "retry: 1500" {
		t.Fatalf("first line %q, want retry: 1500", got[0])
	}
}

func TestStreamSendsEventsWithIdNameAndDataThenEnds(t *testing.T) {
	l := &evlog{}
	l.add(`{"a":1}`)
	srv := serve(t, sse.Config{Poll: 10 * time.Millisecond}, l.source)
	c := connect(t, srv.URL, "")
	got := c.until(t, "the first event", is(`data: {"a":1}`))
	if want := []string{"id: 1", "event: note", `data: {"a":1}`}; strings.Join(got[len(got)-3:], "|") != strings.Join(want, "|") {
		t.Fatalf("event lines %q, want %q", got[len(got)-3:], want)
	}
	l.add("two\nlines") // data with a line break: one data line per line
	got = c.until(t, "the second event", is("data: lines"))
	if want := []string{"id: 2", "event: note", "data: two", "data: lines"}; strings.Join(got[len(got)-4:], "|") != strings.Join(want, "|") {
		t.Fatalf("event lines %q, want %q", got[len(got)-4:], want)
	}
	l.close()
	c.until(t, "the end event", is("event: end"))
	c.ended(t, "the end event")
}

func TestStreamResumesAfterLastEventID(t *testing.T) {
	l := &evlog{}
	for _, d := range []string{"one", "two", "three"} {
		l.add(d)
	}
	srv := serve(t, sse.Config{Poll: 10 * time.Millisecond}, l.source)
	c := connect(t, srv.URL, "2")
	got := c.until(t, "event three", is("data: three"))
	for _, line := range got {
		if line == "data: one" || line == "data: two" {
			t.Fatalf("resumed after 2 but got %q", got)
		}
	}
	// The id the stream goes on from is the last one sent, not the first asked.
	l.add("four")
	got = c.until(t, "event four", is("data: four"))
	if strings.Count(strings.Join(got, "\n"), "data: three") != 0 {
		t.Fatalf("event three sent twice: %q", got)
	}
}

func TestStreamSendsHeartbeatWhileIdle(t *testing.T) {
	srv := serve(t, sse.Config{Poll: 5 * time.Millisecond, Heartbeat: 30 * time.Millisecond}, (&evlog{}).source)
	c := connect(t, srv.URL, "")
	start := time.Now()
	c.until(t, "a heartbeat", is(": heartbeat"))
	if d := time.Since(start); d < 25*time.Millisecond {
		t.Fatalf("heartbeat after %v, want about 30ms of silence first", d)
	}
}

func TestStreamWithoutHeartbeatWhileEventsFlow(t *testing.T) {
	l := &evlog{}
	srv := serve(t, sse.Config{Poll: 5 * time.Millisecond, Heartbeat: time.Hour}, l.source)
	c := connect(t, srv.URL, "")
	for i := range 5 {
		l.add("e" + strconv.Itoa(i))
		got := c.until(t, "event", is("data: e"+strconv.Itoa(i)))
		for _, line := range got {
			if strings.HasPrefix(line, ":") {
				t.Fatalf("heartbeat %q within the hour", line)
			}
		}
	}
}

func TestStreamEndsWhenServerDrains(t *testing.T) {
	done := make(chan struct{})
	srv := serve(t, sse.Config{Poll: 5 * time.Millisecond, Done: done}, (&evlog{}).source)
	c := connect(t, srv.URL, "")
	c.until(t, "the retry line", func(l string) bool { return strings.HasPrefix(l, "retry:") })
	close(done)
	c.ended(t, "Done was closed")
}

func TestStreamEndsWhenNoLongerAlive(t *testing.T) {
	var alive atomic.Bool
	alive.Store(true)
	var asked atomic.Int32
	srv := serve(t, sse.Config{Poll: 5 * time.Millisecond, Alive: func() bool { asked.Add(1); return alive.Load() }}, (&evlog{}).source)
	c := connect(t, srv.URL, "")
	c.until(t, "the retry line", func(l string) bool { return strings.HasPrefix(l, "retry:") })
	alive.Store(false)
	c.ended(t, "Alive said no")
	if asked.Load() == 0 {
		t.Fatal("Alive was never asked")
	}
}

func TestStreamStopsAskingTheSourceWhenTheClientGoes(t *testing.T) {
	var calls atomic.Int32
	stopped := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(stopped)
		st, err := sse.Open(w, sse.Config{Poll: 5 * time.Millisecond})
		if err != nil {
			t.Error(err)
			return
		}
		st.Run(r.Context(), "", func(context.Context, string) ([]sse.Event, sse.Step, error) {
			calls.Add(1)
			return nil, sse.Wait, nil
		})
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatalf("Run still going after the client left (%d source calls)", calls.Load())
	}
}

func TestSnapshotSendsEachStateOnceAndResumesFromItsId(t *testing.T) {
	var mu sync.Mutex
	state := map[string]any{"status": "idle"}
	read := func(context.Context) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		return map[string]any{"status": state["status"]}, nil
	}
	srv := serve(t, sse.Config{Poll: 5 * time.Millisecond, Heartbeat: 20 * time.Millisecond}, sse.Snapshot("conversation", read))
	c := connect(t, srv.URL, "")
	got := c.until(t, "the first state", is(`data: {"status":"idle"}`))
	id, ok := strings.CutPrefix(got[len(got)-3], "id: ")
	if !ok || id == "" || got[len(got)-2] != "event: conversation" {
		t.Fatalf("first state lines %q", got)
	}
	// Unchanged: only heartbeats follow, never the same state again.
	got = c.until(t, "two heartbeats", func() func(string) bool {
		n := 0
		return func(l string) bool {
			if l == ": heartbeat" {
				n++
			}
			return n == 2
		}
	}())
	if strings.Contains(strings.Join(got, "\n"), "data:") {
		t.Fatalf("unchanged state sent again: %q", got)
	}
	// A client resuming with the id of the state it holds gets nothing until it changes.
	r := connect(t, srv.URL, id)
	got = r.until(t, "a heartbeat on the resumed stream", is(": heartbeat"))
	if strings.Contains(strings.Join(got, "\n"), "data:") {
		t.Fatalf("resumed stream sent the state it holds: %q", got)
	}
	mu.Lock()
	state["status"] = "running"
	mu.Unlock()
	for _, s := range []*client{c, r} {
		got = s.until(t, "the changed state", is(`data: {"status":"running"}`))
		if next := strings.TrimPrefix(got[len(got)-3], "id: "); next == id {
			t.Fatalf("changed state kept id %s", id)
		}
	}
}

func TestOpenRefusesWithoutFlusherOrPoll(t *testing.T) {
	var w noFlush
	if _, err := sse.Open(&w, sse.Config{Poll: time.Second}); err != sse.ErrNotSupported {
		t.Fatalf("Open on a writer without Flush = %v, want ErrNotSupported", err)
	}
	if w.wrote || len(w.h) != 0 {
		t.Fatalf("refused Open wrote: headers %v, body %v", w.h, w.wrote)
	}
	rec := httptest.NewRecorder()
	if _, err := sse.Open(rec, sse.Config{}); err == nil || !strings.Contains(err.Error(), "Poll") {
		t.Fatalf("Open without Poll = %v, want an error naming Poll", err)
	}
	if rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "" {
		t.Fatalf("refused Open wrote %q", rec.Body.String())
	}
}

// noFlush is a ResponseWriter that cannot flush.
type noFlush struct {
	h     http.Header
	wrote bool
}

func (w *noFlush) Header() http.Header {
	if w.h == nil {
		w.h = http.Header{}
	}
	return w.h
}
func (w *noFlush) Write(p []byte) (int, error) { w.wrote = true; return len(p), nil }
func (w *noFlush) WriteHeader(int)             { w.wrote = true }

// With Config.Watch, a closed watch channel makes the stream ask its source
// again at once: the event comes although the poll is an hour.
func TestAWatchWakesTheStreamBeforeItsPoll(t *testing.T) {
	l := &evlog{}
	l.add(`{"a":1}`)
	var mu sync.Mutex // guards wake
	wake := make(chan struct{})
	watch := func() (<-chan struct{}, func()) {
		mu.Lock()
		defer mu.Unlock()
		return wake, func() {}
	}
	signal := func() {
		mu.Lock()
		defer mu.Unlock()
		close(wake)
		wake = make(chan struct{})
	}
	srv := serve(t, sse.Config{Poll: time.Hour, Watch: watch}, l.source)
	c := connect(t, srv.URL, "")
	c.until(t, "the first event", is(`data: {"a":1}`))
	l.add(`{"a":2}`)
	signal()
	c.until(t, "the event after the signal", is(`data: {"a":2}`))
}
