package httpapi

import (
	"net/http"

	"waymark/internal/access"
)

// userBody is what an administrator sends for a user (API.md,
// Administration). Password is set-only: absent keeps it. Active absent:
// true for a new user, unchanged for an existing one.
type userBody struct {
	UID             int64    `json:"uid"`
	Username        string   `json:"username"`
	Password        *string  `json:"password"`
	Active          *bool    `json:"active"`
	Admin           bool     `json:"admin"`
	ServiceAccount  bool     `json:"serviceAccount"`
	BackendLanguage string   `json:"backendLanguage"`
	Groups          []int64  `json:"groups"`
	Languages       []int64  `json:"languages"`
	Mounts          []int64  `json:"mounts"`
	Grants          []string `json:"grants"`
	// Read-only fields of the answer, accepted and ignored so that a GET
	// answer can be edited and sent back.
	HasPassword any `json:"hasPassword"`
	Tokens      any `json:"tokens"`
}

func (b userBody) change() access.AccountChange {
	return access.AccountChange{UID: b.UID, Username: b.Username, Password: b.Password, Active: b.Active, Admin: b.Admin,
		ServiceAccount: b.ServiceAccount, BackendLanguage: b.BackendLanguage, Groups: b.Groups, Languages: b.Languages,
		Mounts: b.Mounts, Grants: b.Grants}
}

// handleAdminUserList answers GET /api/admin/users.
func (s *Server) handleAdminUserList(w http.ResponseWriter, r *http.Request) error {
	list, err := access.ListAccounts(r.Context(), s.dir, s.db)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"users": list})
}

// handleAdminUserCreate answers POST /api/admin/users.
func (s *Server) handleAdminUserCreate(w http.ResponseWriter, r *http.Request) error {
	var body userBody
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	a, err := access.CreateAccount(r.Context(), s.src, s.dir, s.db, body.change(), s.hashCost)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusCreated, a)
}

// handleAdminUserGet answers GET /api/admin/users/{uid}.
func (s *Server) handleAdminUserGet(w http.ResponseWriter, r *http.Request) error {
	uid, err := adminUID(r)
	if err != nil {
		return err
	}
	a, err := access.GetAccount(r.Context(), s.dir, s.db, uid)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, a)
}

// handleAdminUserUpdate answers PUT /api/admin/users/{uid}; active false
// disables the user, whose sessions and tokens stop at once.
func (s *Server) handleAdminUserUpdate(w http.ResponseWriter, r *http.Request) error {
	uid, err := adminUID(r)
	if err != nil {
		return err
	}
	var body userBody
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.UID != 0 && body.UID != uid {
		return errInvalid.With("uid: the body names %d, the path %d", body.UID, uid)
	}
	body.UID = uid
	ch := body.change()
	ch.KeepSession = sessionFrom(r.Context()) // a new password of one's own keeps this session
	a, err := access.UpdateAccount(r.Context(), s.src, s.dir, s.db, ch, s.hashCost)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, a)
}
