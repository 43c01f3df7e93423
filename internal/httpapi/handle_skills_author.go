package httpapi

import (
	"fmt"
	"net/http"

	"waymark/internal/skill"
)

// skillCreateRequest is the body of POST /api/skills.
type skillCreateRequest struct {
	Source     int64  `json:"source"`
	Identifier string `json:"identifier"`
	Markdown   string `json:"markdown"`
}

// parseMarkdown reads a SKILL.md sent by a client; a refusal names the line.
func parseMarkdown(text string) (skill.Version, error) {
	if text == "" {
		return skill.Version{}, errBadRequest.With("markdown is required")
	}
	v, err := skill.Parse([]byte(text))
	if err != nil {
		return skill.Version{}, fmt.Errorf("markdown: %w", err)
	}
	return v, nil
}

// handleSkillCreate answers POST /api/skills (administrators): a new backend
// skill, disabled, from its SKILL.md text; 201 with the skill as GET shows it.
func (s *Server) handleSkillCreate(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	var body skillCreateRequest
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Source <= 0 {
		return errBadRequest.With("source: want the uid of a backend skill source")
	}
	v, err := parseMarkdown(body.Markdown)
	if err != nil {
		return err
	}
	k, err := s.skills.Create(r.Context(), skill.CreateParams{Source: body.Source, Identifier: body.Identifier,
		Version: v, Actor: ActorFrom(r.Context()).UID})
	if err != nil {
		return err
	}
	return s.writeSkillDetail(w, r, http.StatusCreated, k.UID)
}

// handleSkillUpdate answers PUT /api/skills/{uid} (administrators): a new
// version of a backend skill from its SKILL.md text.
func (s *Server) handleSkillUpdate(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	uid, err := pathUID(r, "uid")
	if err != nil {
		return err
	}
	var body skillUpdateRequest
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	v, err := parseMarkdown(body.Markdown)
	if err != nil {
		return err
	}
	if _, err := s.skills.Update(r.Context(), skill.UpdateParams{UID: uid, Version: v, Actor: ActorFrom(r.Context()).UID}); err != nil {
		return err
	}
	return s.writeSkillDetail(w, r, http.StatusOK, uid)
}

// handleSkillEnable answers POST /api/skills/{uid}/enable (administrators).
func (s *Server) handleSkillEnable(w http.ResponseWriter, r *http.Request) error {
	return s.setSkillEnabled(w, r, true)
}

// handleSkillDisable answers POST /api/skills/{uid}/disable (administrators).
func (s *Server) handleSkillDisable(w http.ResponseWriter, r *http.Request) error {
	return s.setSkillEnabled(w, r, false)
}

func (s *Server) setSkillEnabled(w http.ResponseWriter, r *http.Request, enabled bool) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	uid, err := pathUID(r, "uid")
	if err != nil {
		return err
	}
	if err := s.skills.SetEnabled(r.Context(), ActorFrom(r.Context()).UID, uid, enabled); err != nil {
		return err
	}
	return s.writeSkillItem(w, r, http.StatusOK, uid)
}

// skillUpdateRequest is the body of PUT /api/skills/{uid}.
type skillUpdateRequest struct {
	Markdown string `json:"markdown"`
}
