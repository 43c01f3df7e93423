package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// ssePoll is how often a stream looks for new events in the database (the
// writer may be another process).
const ssePoll = 200 * time.Millisecond

// stillAuthenticated checks a streaming request's credential and user again,
// as stored now: a stream ends within one poll once its token or session is
// deleted or its user disabled (issue 12 item 4).
func (s *Server) stillAuthenticated(r *http.Request) bool {
	_, err := s.authenticate(r)
	return err == nil
}

func wantsSSE(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// streamRunEvents sends the run's events after `after` as server-sent events
// (id = sequence, event = kind), live, until the run has ended and every event
// is sent, the client goes away, or the server drains.
func (s *Server) streamRunEvents(w http.ResponseWriter, r *http.Request, id string, after int64) error {
	ctx := r.Context()
	uid := ActorFrom(ctx).UID
	// Read the first events before committing to a stream, so that a caller
	// who may not read the transcript still gets a JSON 404.
	evs, err := s.runtime.Events(ctx, uid, id, after, 500)
	if err != nil {
		return err
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		return errNotAcceptable
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	tick := time.NewTicker(ssePoll)
	defer tick.Stop()
	for first := true; ; first = false {
		if !first {
			if !s.stillAuthenticated(r) {
				return nil
			}
			if evs, err = s.runtime.Events(ctx, uid, id, after, 500); err != nil {
				return nil // the header is sent; the client sees the stream end
			}
		}
		for _, e := range evs {
			data, _ := json.Marshal(e)
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Sequence, e.Kind, data); err != nil {
				return nil
			}
			after = e.Sequence
		}
		if len(evs) > 0 {
			fl.Flush()
			continue
		}
		st, err := s.runtime.Status(ctx, uid, id)
		if err != nil || st.Status.Terminal() {
			fmt.Fprint(w, "event: end\ndata: {}\n\n")
			fl.Flush()
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-Draining(ctx):
			return nil
		case <-tick.C:
		}
	}
}
