package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"waymark/internal/access"
	"waymark/internal/auth"
)

type tokenBody struct {
	Label string `json:"label"`
}

type tokenAnswer struct {
	Token     string    `json:"token"`
	User      int64     `json:"user"`
	Label     string    `json:"label"`
	CreatedAt time.Time `json:"createdAt"`
}

// handleAdminTokenCreate answers POST /api/admin/users/{uid}/tokens: a new
// API token for the user, shown in this answer only (the store keeps its
// hash).
func (s *Server) handleAdminTokenCreate(w http.ResponseWriter, r *http.Request) error {
	uid, err := adminUID(r)
	if err != nil {
		return err
	}
	var body tokenBody
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	now := s.clock.Now()
	token, err := access.IssueToken(r.Context(), s.dir, s.db, uid, body.Label, now, s.hashCost)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusCreated, tokenAnswer{Token: token, User: uid, Label: body.Label, CreatedAt: now})
}

// handleAdminTokenList answers GET /api/admin/users/{uid}/tokens: the user's
// tokens by id, label and creation time — never the tokens themselves.
func (s *Server) handleAdminTokenList(w http.ResponseWriter, r *http.Request) error {
	uid, err := adminUID(r)
	if err != nil {
		return err
	}
	if _, err := s.dir.LoadUser(r.Context(), s.db, uid); err != nil {
		return err
	}
	list, err := auth.ListTokens(r.Context(), s.db, uid)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"tokens": list})
}

// handleAdminTokenDelete answers DELETE /api/admin/users/{uid}/tokens/{id}:
// the token is refused from the next request on.
func (s *Server) handleAdminTokenDelete(w http.ResponseWriter, r *http.Request) error {
	uid, err := adminUID(r)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return errNotFound.With("no such token")
	}
	found, err := auth.DeleteToken(r.Context(), s.db, uid, id)
	if err != nil {
		return err
	}
	if !found {
		return errNotFound.With("no such token")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
