package httpapi

import (
	"net/http"
	"strconv"

	"waymark/internal/access"
)

// HandleAdmin registers an authenticated route for administrators only: any
// other user gets 403 before h runs, so before any lookup, decoding or
// validation — a non-admin learns nothing about what exists.
func (s *Server) HandleAdmin(pattern string, h HandlerFunc) {
	s.Handle(pattern, func(w http.ResponseWriter, r *http.Request) error {
		if !ActorFrom(r.Context()).IsAdmin() {
			return access.ErrDenied
		}
		return h(w, r)
	})
}

// adminUID reads the uid path value of an administration route; a value that
// is not a positive integer names nothing, so it is 404 like an unknown uid.
func adminUID(r *http.Request) (int64, error) {
	n, err := strconv.ParseInt(r.PathValue("uid"), 10, 64)
	if err != nil || n <= 0 {
		return 0, errNotFound.With("no such uid %q", r.PathValue("uid"))
	}
	return n, nil
}

// grantsBody is the body of PUT …/grants.
type grantsBody struct {
	Grants []string `json:"grants"`
}

// grantsOf reads the uid of the path and the body of PUT …/grants.
func grantsOf(r *http.Request) (int64, []string, error) {
	uid, err := adminUID(r)
	if err != nil {
		return 0, nil, err
	}
	var body grantsBody
	if err := DecodeJSON(r, &body); err != nil {
		return 0, nil, err
	}
	return uid, body.Grants, nil
}

// handleAdminUserGrants answers PUT /api/admin/users/{uid}/grants: the
// grants Waymark keeps for the user, nothing else changed — beside TYPO3
// the one change of a TYPO3 user made in Waymark.
func (s *Server) handleAdminUserGrants(w http.ResponseWriter, r *http.Request) error {
	uid, gs, err := grantsOf(r)
	if err != nil {
		return err
	}
	a, err := access.SetUserGrants(r.Context(), s.dir, s.db, uid, gs)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, a)
}

// handleAdminGroupGrants answers PUT /api/admin/groups/{uid}/grants, as
// handleAdminUserGrants for a group.
func (s *Server) handleAdminGroupGrants(w http.ResponseWriter, r *http.Request) error {
	uid, gs, err := grantsOf(r)
	if err != nil {
		return err
	}
	g, err := access.SetGroupGrants(r.Context(), s.dir, s.db, uid, gs)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, g)
}
