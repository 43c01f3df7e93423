package httpapi

import (
	"errors"
	"net/http"

	"waymark/internal/process"
)

// handleAdminProcessSkills answers GET
// /api/admin/configurations/{uid}/process-skills?user=UID: the slash menu
// that user would see for the configuration (attachments), read
// with the same rule as their own GET /api/configurations/{uid}/process-skills.
// usable is false when the user may not use the configuration (or it is
// inactive); skills is then empty.
func (s *Server) handleAdminProcessSkills(w http.ResponseWriter, r *http.Request) error {
	uid, err := adminUID(r)
	if err != nil {
		return err
	}
	if _, err := s.configs.Get(r.Context(), uid); err != nil {
		return err
	}
	user, err := positiveParam(r.URL.Query().Get("user"), "user")
	if err != nil {
		return err
	}
	if user == 0 {
		return errBadRequest.With("user: the uid of the user whose menu to show is required")
	}
	if _, err := s.dir.LoadUser(r.Context(), s.db, user); err != nil {
		return err
	}
	list, err := s.catalogue.ForActor(r.Context(), user, uid)
	usable := true
	if errors.Is(err, process.ErrNotFound) {
		usable, list, err = false, []process.CatalogueEntry{}, nil
	}
	if err != nil {
		return err
	}
	if list == nil {
		list = []process.CatalogueEntry{}
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"configuration": uid, "user": user, "usable": usable, "skills": list})
}
