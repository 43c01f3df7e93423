package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"waymark/internal/access"
	"waymark/internal/skill"
)

// skillItem is one skill of GET /api/skills, and the answer of the calls
// that change a skill's switches.
type skillItem struct {
	UID          int64    `json:"uid"`
	Source       int64    `json:"source"`
	Identifier   string   `json:"identifier"`
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Process      bool     `json:"process"`
	Enabled      bool     `json:"enabled"`
	Orphaned     bool     `json:"orphaned"`
	Digest       string   `json:"digest"`
	Instructs    bool     `json:"instructs"`
	AllowedTools []string `json:"allowedTools"` // null: no declaration
}

// skillDetail is the answer of GET /api/skills/{uid}.
type skillDetail struct {
	UID            int64                `json:"uid"`
	Identifier     string               `json:"identifier"`
	Version        skill.Version        `json:"version"`
	Digest         string               `json:"digest"`
	RawFrontMatter string               `json:"rawFrontMatter"`
	Enabled        bool                 `json:"enabled"`
	Orphaned       bool                 `json:"orphaned"`
	Instructs      bool                 `json:"instructs"`
	UpdatedAt      time.Time            `json:"updatedAt"`
	Source         skill.Source         `json:"source"`
	Approvals      []skill.Approval     `json:"approvals"`
	LastApproved   *skill.Approval      `json:"lastApproved"`
	Diff           []skill.DiffLine     `json:"diff"`
	History        []skill.HistoryEntry `json:"history"`
	Audit          []skill.AuditEntry   `json:"audit"`
}

// mayReviewSkills: administrators and holders of the skill_approve grant see
// every skill.
func mayReviewSkills(a *access.Actor) bool {
	return a.MayReviewSkills()
}

// requireAdmin refuses everyone but administrators.
func requireAdmin(r *http.Request) error {
	if !ActorFrom(r.Context()).IsAdmin() {
		return access.ErrDenied.With("only administrators may do this")
	}
	return nil
}

// requireReviewer refuses everyone but administrators and skill approvers.
func requireReviewer(r *http.Request) error {
	if !mayReviewSkills(ActorFrom(r.Context())) {
		return access.ErrDenied.With("only administrators and skill approvers may see skills")
	}
	return nil
}

// pathUID reads a positive integer path value.
func pathUID(r *http.Request, name string) (int64, error) {
	n, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || n <= 0 {
		return 0, errBadRequest.With("%s: want a positive integer, got %q", name, r.PathValue(name))
	}
	return n, nil
}

// itemOf describes a skill for lists, with whether it instructs now.
func (s *Server) itemOf(ctx context.Context, k skill.Skill) (skillItem, error) {
	instructs, _, err := s.skills.Instructs(ctx, k.UID)
	if err != nil {
		return skillItem{}, err
	}
	v := k.Version
	return skillItem{UID: k.UID, Source: k.Source, Identifier: k.Identifier, Name: v.Name, Description: v.Description,
		Process: v.Process, Enabled: k.Enabled, Orphaned: k.Orphaned, Digest: k.Digest(), Instructs: instructs,
		AllowedTools: v.AllowedTools}, nil
}

// writeSkillItem answers one skill as GET /api/skills lists it.
func (s *Server) writeSkillItem(w http.ResponseWriter, r *http.Request, status int, uid int64) error {
	k, err := s.skills.Get(r.Context(), uid)
	if err != nil {
		return err
	}
	it, err := s.itemOf(r.Context(), k)
	if err != nil {
		return err
	}
	return WriteJSON(w, status, it)
}

// handleSkillList answers GET /api/skills (administrators and skill approvers).
func (s *Server) handleSkillList(w http.ResponseWriter, r *http.Request) error {
	if err := requireReviewer(r); err != nil {
		return err
	}
	ks, err := s.skills.List(r.Context(), 0)
	if err != nil {
		return err
	}
	out := make([]skillItem, 0, len(ks))
	for _, k := range ks {
		it, err := s.itemOf(r.Context(), k)
		if err != nil {
			return err
		}
		out = append(out, it)
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"skills": out})
}

// handleSkillGet answers GET /api/skills/{uid}: the skill, its source, its
// approvals, the latest unrevoked approval snapshot and the line diff of the
// current version against it (all "+" when nothing was approved yet), the
// edit history and the audit trail.
func (s *Server) handleSkillGet(w http.ResponseWriter, r *http.Request) error {
	if err := requireReviewer(r); err != nil {
		return err
	}
	uid, err := pathUID(r, "uid")
	if err != nil {
		return err
	}
	return s.writeSkillDetail(w, r, http.StatusOK, uid)
}

// writeSkillDetail answers one skill as GET /api/skills/{uid} shows it
// (skill.Store.Review, which the web UI's skill page shows too).
func (s *Server) writeSkillDetail(w http.ResponseWriter, r *http.Request, status int, uid int64) error {
	rv, err := s.skills.Review(r.Context(), uid)
	if err != nil {
		return err
	}
	k := rv.Skill
	d := skillDetail{UID: k.UID, Identifier: k.Identifier, Version: k.Version, Digest: k.Digest(),
		RawFrontMatter: k.RawFrontMatter, Enabled: k.Enabled, Orphaned: k.Orphaned, Instructs: rv.Instructs,
		UpdatedAt: k.UpdatedAt, Source: rv.Source, Approvals: nonNil(rv.Approvals), LastApproved: rv.LastApproved,
		Diff: nonNil(rv.Diff), History: nonNil(rv.History), Audit: nonNil(rv.Audit)}
	return WriteJSON(w, status, d)
}
