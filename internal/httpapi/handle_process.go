package httpapi

import (
	"net/http"
	"strconv"
)

// handleEndProcess answers POST /api/runs/{uuid}/end-process: {ended, status};
// 404 for anyone but the initiator or an administrator (ADR-228 item 7);
// 409 lineage_unreadable when the lineage of the run or of its origin
// cannot be read (nothing changed; L7.9).
func (s *Server) handleEndProcess(w http.ResponseWriter, r *http.Request) error {
	ended, status, err := s.ender.EndProcess(r.Context(), ActorFrom(r.Context()).UID, r.PathValue("uuid"))
	if err != nil { // process.ErrNotFound is 404, process.ErrUnreadable 409 lineage_unreadable
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"ended": ended, "status": status})
}

// handleProcessSkills answers GET /api/configurations/{uid}/process-skills
// (ADR-228 item 8); unknown, inactive and not usable configurations answer 404 alike.
func (s *Server) handleProcessSkills(w http.ResponseWriter, r *http.Request) error {
	uid, err := strconv.ParseInt(r.PathValue("uid"), 10, 64)
	if err != nil || uid <= 0 {
		return errNotFound
	}
	list, err := s.catalogue.ForActor(r.Context(), ActorFrom(r.Context()).UID, uid)
	if err != nil { // process.ErrNotFound is 404
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"skills": list})
}
