package httpapi

import (
	"net/http"

	"waymark/internal/access"
)

// Me is the answer of GET /api/me: the caller with its effective groups
// (subgroups included), languages, mounts and grants.
type Me struct {
	UID            int64   `json:"uid"`
	Username       string  `json:"username"`
	Admin          bool    `json:"admin"`
	ServiceAccount bool    `json:"serviceAccount"`
	Groups         []int64 `json:"groups"`
	// Languages the caller may edit; empty with AllLanguages true when unrestricted.
	Languages       []int64  `json:"languages"`
	AllLanguages    bool     `json:"allLanguages"`
	Mounts          []int64  `json:"mounts"`
	Grants          []string `json:"grants"`
	BackendLanguage string   `json:"backendLanguage"`
}

// MeOf describes an actor as GET /api/me does.
func MeOf(a *access.Actor) Me {
	langs := a.EffectiveLanguages()
	return Me{
		UID:             a.UID,
		Username:        a.Username,
		Admin:           a.IsAdmin(),
		ServiceAccount:  a.ServiceAccount,
		Groups:          nonNil(a.AllGroups),
		Languages:       nonNil(langs),
		AllLanguages:    langs == nil,
		Mounts:          nonNil(a.EffectiveMounts()),
		Grants:          nonNil(a.EffectiveGrants()),
		BackendLanguage: a.BackendLanguage,
	}
}

// nonNil makes a nil list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// handleMe answers GET /api/me (API.md §3 Operations).
func (s *Server) handleMe(w http.ResponseWriter, r *http.Request) error {
	return WriteJSON(w, http.StatusOK, MeOf(ActorFrom(r.Context())))
}

// languageRequest is the body of PUT /api/me/language.
type languageRequest struct {
	BackendLanguage string `json:"backendLanguage"`
}

// handleMeLanguage answers PUT /api/me/language: the caller's own language
// of the UI and of the assistant's replies (de or en), as the settings
// screen stores it → 200 Me. Another value is 400 invalid and changes
// nothing; beside TYPO3 the language is TYPO3's (409 managed_elsewhere).
func (s *Server) handleMeLanguage(w http.ResponseWriter, r *http.Request) error {
	var body languageRequest
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	uid := ActorFrom(r.Context()).UID
	if err := access.SetBackendLanguage(r.Context(), s.dir, s.db, uid, body.BackendLanguage); err != nil {
		return err
	}
	a, err := access.LoadActor(r.Context(), s.dir, s.db, uid)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, MeOf(a))
}
