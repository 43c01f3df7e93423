package httpapi

import (
	"net/http"

	"waymark/internal/access"
)

// handleAdminGroupList answers GET /api/admin/groups.
func (s *Server) handleAdminGroupList(w http.ResponseWriter, r *http.Request) error {
	list, err := access.ListGroups(r.Context(), s.dir, s.db)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"groups": list})
}

// handleAdminGroupCreate answers POST /api/admin/groups.
func (s *Server) handleAdminGroupCreate(w http.ResponseWriter, r *http.Request) error {
	var g access.Group
	if err := DecodeJSON(r, &g); err != nil {
		return err
	}
	g, err := access.CreateGroup(r.Context(), s.src, s.dir, s.db, g)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusCreated, g)
}

// handleAdminGroupGet answers GET /api/admin/groups/{uid}.
func (s *Server) handleAdminGroupGet(w http.ResponseWriter, r *http.Request) error {
	uid, err := adminUID(r)
	if err != nil {
		return err
	}
	g, err := access.GetGroup(r.Context(), s.dir, s.db, uid)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, g)
}

// handleAdminGroupUpdate answers PUT /api/admin/groups/{uid}; members' rights
// change with their next request.
func (s *Server) handleAdminGroupUpdate(w http.ResponseWriter, r *http.Request) error {
	uid, err := adminUID(r)
	if err != nil {
		return err
	}
	var g access.Group
	if err := DecodeJSON(r, &g); err != nil {
		return err
	}
	if g.UID != 0 && g.UID != uid {
		return errInvalid.With("uid: the body names %d, the path %d", g.UID, uid)
	}
	g.UID = uid
	g, err = access.UpdateGroup(r.Context(), s.src, s.dir, s.db, g)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, g)
}
