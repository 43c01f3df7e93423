package httpapi

import (
	"errors"
	"net/http"

	"waymark/internal/skill"
)

// sourceRequest is the body of POST /api/skill-sources.
type sourceRequest struct {
	UID        int64            `json:"uid"`
	Type       skill.SourceType `json:"type"`
	Title      string           `json:"title"`
	Path       string           `json:"path"`
	TrustLevel skill.Trust      `json:"trustLevel"`
	// Enabled defaults to the stored value, or true for a new source.
	Enabled *bool `json:"enabled"`
}

// handleSkillSourceList answers GET /api/skill-sources (administrators).
func (s *Server) handleSkillSourceList(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	srcs, err := s.skills.SourceList(r.Context())
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"sources": nonNil(srcs)})
}

// handleSkillSourcePut answers POST /api/skill-sources (administrators):
// creates the source with that uid (201) or replaces it (200); its type
// cannot change.
func (s *Server) handleSkillSourcePut(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	var body sourceRequest
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	ctx := r.Context()
	status, enabled := http.StatusCreated, true
	old, err := s.skills.SourceGet(ctx, body.UID)
	switch {
	case err == nil:
		status, enabled = http.StatusOK, old.Enabled
	case !errors.Is(err, skill.ErrNotFound):
		return err
	}
	if body.Enabled != nil {
		enabled = *body.Enabled
	}
	src := skill.Source{UID: body.UID, Type: body.Type, Title: body.Title, Path: body.Path, Trust: body.TrustLevel, Enabled: enabled}
	if err := s.skills.SourcePut(ctx, src); err != nil {
		return err
	}
	got, err := s.skills.SourceGet(ctx, body.UID)
	if err != nil {
		return err
	}
	return WriteJSON(w, status, got)
}

// handleSkillSourceSync answers POST /api/skill-sources/{uid}/sync
// (administrators): brings a directory source up to date with its folder and
// answers the report; a missing or unreadable folder is 422
// source_unreadable and changes nothing.
func (s *Server) handleSkillSourceSync(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	uid, err := pathUID(r, "uid")
	if err != nil {
		return err
	}
	rep, err := s.skills.Sync(r.Context(), uid)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, syncReportOf(rep))
}

// syncReportOf returns rep with every list non-nil, so that JSON shows [] for
// nothing.
func syncReportOf(rep skill.SyncReport) skill.SyncReport {
	for _, l := range []*[]string{&rep.Added, &rep.Changed, &rep.Disabled, &rep.Orphaned, &rep.Restored, &rep.Unchanged} {
		*l = nonNil(*l)
	}
	return rep
}
