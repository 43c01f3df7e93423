package httpapi

import (
	"net/http"
	"strconv"

	"waymark/internal/agent"
	"waymark/internal/httpapi/sse"
	"waymark/internal/llm"
)

// runRequest is the body of POST /api/runs (API.md §3).
type runRequest struct {
	Configuration int64         `json:"configuration"`
	Messages      []llm.Message `json:"messages"`
	Queued        bool          `json:"queued"`
	AllowedTools  []string      `json:"allowedTools"`
	MaxIterations int           `json:"maxIterations"`
	Language      int64         `json:"language"`
	// Invocation starts a process skill; PredecessorRunUUID continues a run (ADR-228 item 1).
	Invocation         *agent.Invocation `json:"invocation"`
	PredecessorRunUUID string            `json:"predecessorRunUuid"`
}

// handleRunCreate starts a run: interactively (answers once it suspended or
// ended, with its answer) or queued (answers at once).
func (s *Server) handleRunCreate(w http.ResponseWriter, r *http.Request) error {
	var body runRequest
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	actor := ActorFrom(r.Context())
	req := agent.Request{Configuration: body.Configuration, Messages: body.Messages, AllowedTools: body.AllowedTools,
		MaxIterations: body.MaxIterations, Language: body.Language, Invocation: body.Invocation, Predecessor: body.PredecessorRunUUID}
	if body.Queued {
		id, err := s.runtime.Enqueue(r.Context(), actor.UID, req)
		if err != nil {
			return err
		}
		return s.writeRun(w, r, http.StatusCreated, id, "")
	}
	res, err := s.runtime.Run(r.Context(), actor.UID, req)
	if err != nil {
		return err
	}
	return s.writeRun(w, r, http.StatusCreated, res.UUID, res.Answer)
}

// writeRun answers the run's status as the caller sees it; answer is shown
// when this call produced it, whatever the privacy level keeps.
func (s *Server) writeRun(w http.ResponseWriter, r *http.Request, status int, id, answer string) error {
	st, err := s.runtime.Status(r.Context(), ActorFrom(r.Context()).UID, id)
	if err != nil {
		return err
	}
	if answer != "" {
		st.Answer = answer
	}
	return WriteJSON(w, status, st)
}

// handleRunGet answers GET /api/runs/{uuid}.
func (s *Server) handleRunGet(w http.ResponseWriter, r *http.Request) error {
	return s.writeRun(w, r, http.StatusOK, r.PathValue("uuid"), "")
}

// handleRunEvents answers GET /api/runs/{uuid}/events?after=N, or streams
// them as server-sent events when the client accepts text/event-stream.
func (s *Server) handleRunEvents(w http.ResponseWriter, r *http.Request) error {
	after, err := afterParam(r)
	if err != nil {
		return err
	}
	id := r.PathValue("uuid")
	if sse.Wants(r) {
		return s.streamRunEvents(w, r, id, after)
	}
	evs, err := s.runtime.Events(r.Context(), ActorFrom(r.Context()).UID, id, after, 1000)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"events": evs})
}

func afterParam(r *http.Request) (int64, error) {
	v := r.URL.Query().Get("after")
	if v == "" {
		v = r.Header.Get("Last-Event-ID")
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, errBadRequest.With("after: want a non-negative integer")
	}
	return n, nil
}
