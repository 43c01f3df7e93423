package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"waymark/internal/agent"
)

// handleRunApproval answers POST /api/runs/{uuid}/approval. The resumed
// turn runs on a worker: the runtime answers its read-only
// refusals here, then waits for the worker's outcome.
func (s *Server) handleRunApproval(w http.ResponseWriter, r *http.Request) error {
	var d agent.Decision
	if err := DecodeJSON(r, &d); err != nil {
		return err
	}
	id := r.PathValue("uuid")
	res, err := s.runtime.ApproveOnWorker(r.Context(), ActorFrom(r.Context()).UID, id, d)
	if err != nil {
		return err
	}
	return writeDecided(w, res)
}

// handleRunInput answers POST /api/runs/{uuid}/input; the answered turn
// runs on a worker, as an approval's.
func (s *Server) handleRunInput(w http.ResponseWriter, r *http.Request) error {
	var body inputRequest
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	id := r.PathValue("uuid")
	res, err := s.runtime.SubmitInputOnWorker(r.Context(), ActorFrom(r.Context()).UID, id, agent.Input{TurnDigest: body.TurnDigest, Values: body.Values})
	if err != nil {
		return err
	}
	return writeDecided(w, res)
}

// writeDecided answers the run as the decider sees it after the decision.
func writeDecided(w http.ResponseWriter, res agent.Result) error {
	if res.Status == nil {
		return errors.New("the run's status cannot be read")
	}
	return WriteJSON(w, http.StatusOK, res.Status)
}

// handleRunCancel answers POST /api/runs/{uuid}/cancel.
func (s *Server) handleRunCancel(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("uuid")
	if _, err := s.runtime.Cancel(r.Context(), ActorFrom(r.Context()).UID, id); err != nil {
		return err
	}
	return s.writeRun(w, r, http.StatusOK, id, "")
}

// handleRunCancelIfWaiting answers POST /api/runs/{uuid}/cancel-if-waiting: {won, status}.
func (s *Server) handleRunCancelIfWaiting(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("uuid")
	uid := ActorFrom(r.Context()).UID
	won, err := s.runtime.CancelIfWaiting(r.Context(), uid, id)
	if err != nil {
		return err
	}
	st, err := s.runtime.Status(r.Context(), uid, id)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"won": won, "status": st.Status})
}

// handleInbox answers GET /api/inbox?after=&limit=: {runs, next}, newest
// first, the runs waiting for a decision the caller may release.
func (s *Server) handleInbox(w http.ResponseWriter, r *http.Request) error {
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > agent.MaxInboxLimit {
			return errBadRequest.With("limit: want an integer from 1 to %d", agent.MaxInboxLimit)
		}
		limit = n
	}
	page, err := s.runtime.InboxAfter(r.Context(), ActorFrom(r.Context()).UID, r.URL.Query().Get("after"), limit)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, page)
}

// inputRequest is the body of POST /api/runs/{uuid}/input.
type inputRequest struct {
	TurnDigest string          `json:"turnDigest"`
	Values     json.RawMessage `json:"values"`
}
