package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"waymark/internal/chat"
	"waymark/internal/openpoint"
)

// handlePageOpenPoints answers GET /api/pages/{uid}/open-points?skill=: the
// open points of one page the caller may show; 404 alike for missing and forbidden pages.
func (s *Server) handlePageOpenPoints(w http.ResponseWriter, r *http.Request) error {
	page, err := strconv.ParseInt(r.PathValue("uid"), 10, 64)
	if err != nil || page <= 0 {
		return chat.ErrNotFound
	}
	var skill int64
	if v := r.URL.Query().Get("skill"); v != "" {
		if skill, err = strconv.ParseInt(v, 10, 64); err != nil || skill < 0 {
			return errBadRequest.With("skill: want a skill uid")
		}
	}
	list, err := s.points.ForPage(r.Context(), ActorFrom(r.Context()).UID, page, skill)
	if errors.Is(err, openpoint.ErrNotFound) {
		return chat.ErrNotFound // answered like every other missing or hidden thing
	}
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"openPoints": list})
}

// handleOpenPoints answers GET /api/open-points?limit=20: site-wide, newest
// first, the limit counted after the visibility rule (P.D1).
func (s *Server) handleOpenPoints(w http.ResponseWriter, r *http.Request) error {
	limit := openpoint.DefaultLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > openpoint.MaxLimit {
			return errBadRequest.With("limit: want 1 to %d", openpoint.MaxLimit)
		}
		limit = n
	}
	list, err := s.points.Visible(r.Context(), ActorFrom(r.Context()).UID, limit)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"openPoints": list})
}
