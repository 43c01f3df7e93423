// Package sse is the one writer of server-sent event streams:
// the run events stream, the conversation stream and the inbox
// stream of httpapi, and any stream the web UI serves, go through it, so the
// wire is the same everywhere:
//
//   - headers `Content-Type: text/event-stream`, `Cache-Control: no-cache`,
//     `X-Accel-Buffering: no` (proxies must not buffer), sent and flushed at once;
//   - a `retry:` line first (the client's reconnection delay);
//   - every event as `id:`, `event:`, `data:` lines, flushed when written;
//   - a comment line (`: heartbeat`) after Heartbeat without a write, so idle
//     connections are not cut by proxies and a gone client is noticed;
//   - resumption: the source is asked for what comes after the client's
//     `Last-Event-ID` (or an id the caller chose), then after each id sent;
//   - the stream ends when the source says so, the client goes away, the
//     server drains (Config.Done) or the caller's credential is gone
//     (Config.Alive).
//
// The package knows nothing of runs or conversations: a Source reads them.
package sse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Defaults of Config.
const (
	DefaultRetry     = 2 * time.Second
	DefaultHeartbeat = 15 * time.Second
)

// ErrNotSupported is returned by Open when the connection cannot flush (no
// stream is possible); nothing has been written then.
var ErrNotSupported = errors.New("sse: streaming is not supported on this connection")

// Event is one server-sent event.
type Event struct {
	ID   string // the `id:` line; empty: none (the client keeps the last id)
	Name string // the `event:` line; empty: none (a `message` event)
	Data []byte // one `data:` line per line; empty: `data: ` alone
}

// Step says what a stream does after a Source call.
type Step int

const (
	// Wait asks the source again after Config.Poll.
	Wait Step = iota
	// More asks again at once (the source cut a batch short).
	More
	// End ends the stream once the events are sent.
	End
)

// Source yields the events after lastID: the id of the last event sent, at
// first the id the stream was resumed from ("" for none). An error ends the
// stream (the header is sent; the client sees it end).
type Source func(ctx context.Context, lastID string) ([]Event, Step, error)

// Config says how a stream polls and when it ends.
type Config struct {
	Poll      time.Duration   // how often a waiting stream asks its source again (required)
	Heartbeat time.Duration   // a comment line after this long without a write; 0: DefaultHeartbeat
	Retry     time.Duration   // the reconnection delay sent first; 0: DefaultRetry
	Done      <-chan struct{} // closed when the server shuts down; nil: never
	Alive     func() bool     // asked before every source call but the first; false ends the stream; nil: always alive
	// Watch, when set, is called before every source call: the channel it
	// returns is closed when the source may have something new (a change
	// committed in this process, store.Watch), and the stream asks the
	// source again at once instead of at the next poll; the function ends
	// the watch. The poll stays the fallback (another process's change).
	Watch func() (<-chan struct{}, func())
}

// Stream is an open event stream on one response.
type Stream struct {
	w    http.ResponseWriter
	fl   http.Flusher
	cfg  Config
	last time.Time // when the last write was flushed
}

// LastEventID is the id a reconnecting client resumes from ("" for none).
func LastEventID(r *http.Request) string {
	return r.Header.Get("Last-Event-ID")
}

// Wants reports whether the request accepts an event stream.
func Wants(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// Open starts a stream on w: it sends the headers, status 200 and the
// `retry:` line, and flushes them. It returns ErrNotSupported, having written
// nothing, when w cannot flush, and an error naming the field for a bad Config.
func Open(w http.ResponseWriter, cfg Config) (*Stream, error) {
	if cfg.Poll <= 0 {
		return nil, fmt.Errorf("sse: Poll must be greater than 0, got %v", cfg.Poll)
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		return nil, ErrNotSupported
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.Retry <= 0 {
		cfg.Retry = DefaultRetry
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &Stream{w: w, fl: fl, cfg: cfg}
	if _, err := fmt.Fprintf(w, "retry: %d\n\n", cfg.Retry.Milliseconds()); err != nil {
		return s, nil // the client is gone; Run ends at its first write
	}
	s.flush()
	return s, nil
}

// Run sends what src yields, starting after lastID, until src says End, the
// client goes away (ctx), the server drains (Config.Done) or Config.Alive
// says no. It returns nil in every case: the header is already sent.
func (s *Stream) Run(ctx context.Context, lastID string, src Source) {
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	var changed <-chan struct{} // nil without Watch: never ready
	release := func() {}
	defer func() { release() }()
	for first := true; ; first = false {
		if !first && s.cfg.Alive != nil && !s.cfg.Alive() {
			return
		}
		if s.cfg.Watch != nil {
			release()
			changed, release = s.cfg.Watch() // before the read: a change after it wakes the wait
		}
		evs, step, err := src(ctx, lastID)
		if err != nil {
			return
		}
		for _, e := range evs {
			if s.Send(e) != nil {
				return
			}
			if e.ID != "" {
				lastID = e.ID
			}
		}
		switch step {
		case End:
			return
		case More:
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-s.cfg.Done:
			return
		case <-tick.C:
		case <-changed:
		}
		if time.Since(s.last) >= s.cfg.Heartbeat {
			if _, err := fmt.Fprint(s.w, ": heartbeat\n\n"); err != nil {
				return
			}
			s.flush()
		}
	}
}

// Send writes one event and flushes it.
func (s *Stream) Send(e Event) error {
	var b bytes.Buffer
	if e.ID != "" {
		fmt.Fprintf(&b, "id: %s\n", oneLine(e.ID))
	}
	if e.Name != "" {
		fmt.Fprintf(&b, "event: %s\n", oneLine(e.Name))
	}
	for _, line := range bytes.Split(e.Data, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	if _, err := s.w.Write(b.Bytes()); err != nil {
		return err
	}
	s.flush()
	return nil
}

func (s *Stream) flush() {
	s.fl.Flush()
	s.last = time.Now()
}

// oneLine keeps a field on its line: a line break in an id or a name would
// start another field.
func oneLine(v string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(v)
}
