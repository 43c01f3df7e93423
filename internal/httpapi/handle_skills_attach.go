package httpapi

import (
	"errors"
	"net/http"

	"waymark/internal/skill"
)

// attachRequest is the body of POST /api/configurations/{cfg}/skills.
type attachRequest struct {
	Skill    int64          `json:"skill"`
	LoadMode skill.LoadMode `json:"loadMode"`
}

// handleSkillAttach answers POST /api/configurations/{cfg}/skills
// (administrators): attaches a skill with a load mode, or changes the mode.
func (s *Server) handleSkillAttach(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	cfg, err := pathUID(r, "cfg")
	if err != nil {
		return err
	}
	var body attachRequest
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Skill <= 0 {
		return errBadRequest.With("skill: want a skill uid")
	}
	if err := s.skills.Attach(r.Context(), cfg, body.Skill, body.LoadMode); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, skill.Attachment{Configuration: cfg, Skill: body.Skill, Mode: body.LoadMode})
}

// handleSkillDetach answers DELETE /api/configurations/{cfg}/skills/{skill}
// (administrators): 204, or 404 when the skill is not attached.
func (s *Server) handleSkillDetach(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	cfg, err := pathUID(r, "cfg")
	if err != nil {
		return err
	}
	uid, err := pathUID(r, "skill")
	if err != nil {
		return err
	}
	if err := s.skills.Detach(r.Context(), cfg, uid); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleSkillCatalogue answers GET /api/configurations/{cfg}/skills: the
// catalogue of a configuration the caller may use; unknown and forbidden
// configurations answer 404 alike.
func (s *Server) handleSkillCatalogue(w http.ResponseWriter, r *http.Request) error {
	cfg, err := pathUID(r, "cfg")
	if err != nil {
		return err
	}
	entries, err := s.skills.Catalogue(r.Context(), ActorFrom(r.Context()).UID, cfg)
	if errors.Is(err, skill.ErrNotFound) {
		// The same bytes for every configuration the caller cannot use.
		return errNotFound
	}
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"skills": nonNil(entries)})
}
