package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"waymark/internal/httpapi/sse"
)

// ssePoll is how often a stream looks for new events in the database (the
// writer may be another process).
const ssePoll = 200 * time.Millisecond

// stillAuthenticated checks a streaming request's credential and user again,
// as stored now: a stream ends within one poll once its token or session is
// deleted or its user disabled.
func (s *Server) stillAuthenticated(r *http.Request) bool {
	_, err := s.authenticate(r)
	return err == nil
}

// stream serves src on w with the one SSE writer, polling
// every poll, resuming after lastID; it ends when src does, the client goes
// away, the server drains or the caller's credential or account is gone.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, poll time.Duration, lastID string, src sse.Source) error {
	return s.streamWatching(w, r, poll, lastID, src, nil)
}

// streamWatching is stream that also asks src again as soon as watch's
// channel is closed (sse.Config.Watch), not only every poll.
func (s *Server) streamWatching(w http.ResponseWriter, r *http.Request, poll time.Duration, lastID string, src sse.Source,
	watch func() (<-chan struct{}, func())) error {
	st, err := sse.Open(w, sse.Config{
		Poll:  poll,
		Done:  Draining(r.Context()),
		Alive: func() bool { return s.stillAuthenticated(r) },
		Watch: watch,
	})
	if errors.Is(err, sse.ErrNotSupported) {
		return errNotAcceptable
	}
	if err != nil {
		return err
	}
	st.Run(r.Context(), lastID, src)
	return nil
}

// streamRunEvents sends the run's events after `after` as server-sent events
// (id = sequence, event = kind), live, until the run has ended and every event
// is sent (then `event: end`), the client goes away, or the server drains.
func (s *Server) streamRunEvents(w http.ResponseWriter, r *http.Request, id string, after int64) error {
	uid := ActorFrom(r.Context()).UID
	// Read before committing to a stream, so that a caller who may not read
	// the transcript still gets a JSON 404.
	if _, err := s.runtime.Events(r.Context(), uid, id, after, 1); err != nil {
		return err
	}
	src := func(ctx context.Context, lastID string) ([]sse.Event, sse.Step, error) {
		after, _ := strconv.ParseInt(lastID, 10, 64)
		evs, err := s.runtime.Events(ctx, uid, id, after, 500)
		if err != nil {
			return nil, sse.End, err
		}
		if len(evs) > 0 {
			out := make([]sse.Event, len(evs))
			for i, e := range evs {
				data, _ := json.Marshal(e)
				out[i] = sse.Event{ID: strconv.FormatInt(e.Sequence, 10), Name: string(e.Kind), Data: data}
			}
			return out, sse.More, nil
		}
		st, err := s.runtime.Status(ctx, uid, id)
		if err != nil || st.Status.Terminal() {
			return []sse.Event{{Name: "end", Data: []byte("{}")}}, sse.End, nil
		}
		return nil, sse.Wait, nil
	}
	return s.stream(w, r, ssePoll, strconv.FormatInt(after, 10), src)
}
