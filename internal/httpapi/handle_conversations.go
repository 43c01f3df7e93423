package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"waymark/internal/chat"
)

// chatError maps the chat's refusals to HTTP; nil when err is none of them.
func chatError(err error) *Error {
	for _, c := range []struct {
		target error
		status int
		code   string
	}{
		{chat.ErrNotFound, http.StatusNotFound, "not_found"},
		{chat.ErrBusy, http.StatusConflict, "busy"},
		{chat.ErrStaleCard, http.StatusConflict, "stale_card"},
		{chat.ErrInvalid, http.StatusBadRequest, "bad_request"},
		{chat.ErrNoConfig, http.StatusConflict, "no_configuration"},
		{chat.ErrFourEyes, http.StatusConflict, "second_approver_required"},
		{chat.ErrNotOffered, http.StatusConflict, "second_approver"},
		{chat.ErrUnavailable, http.StatusConflict, "skill_unavailable"},
	} {
		if errors.Is(err, c.target) {
			msg := c.target.Error()
			if c.target == chat.ErrInvalid {
				msg = err.Error()
			}
			return &Error{Status: c.status, Code: c.code, Message: msg, Err: err}
		}
	}
	return nil
}

func conversationID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, chat.ErrNotFound
	}
	return id, nil
}

// handleConversationStart answers POST /api/conversations {page, language, skill?} → 201.
func (s *Server) handleConversationStart(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Page     int64 `json:"page"`
		Language int64 `json:"language"`
		Skill    int64 `json:"skill"`
	}
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	v, err := s.chat.Start(r.Context(), ActorFrom(r.Context()).UID, body.Page, body.Language, body.Skill)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusCreated, v)
}

// handleConversationList answers GET /api/conversations.
func (s *Server) handleConversationList(w http.ResponseWriter, r *http.Request) error {
	list, err := s.chat.List(r.Context(), ActorFrom(r.Context()).UID)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"conversations": list})
}

// handleConversationGet answers GET /api/conversations/{id}.
func (s *Server) handleConversationGet(w http.ResponseWriter, r *http.Request) error {
	id, err := conversationID(r)
	if err != nil {
		return err
	}
	v, err := s.chat.Get(r.Context(), ActorFrom(r.Context()).UID, id)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, v)
}

// handleConversationMessage answers POST /api/conversations/{id}/messages {content} → 202.
func (s *Server) handleConversationMessage(w http.ResponseWriter, r *http.Request) error {
	id, err := conversationID(r)
	if err != nil {
		return err
	}
	var body struct {
		Content string `json:"content"`
	}
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	uid := ActorFrom(r.Context()).UID
	if err := s.chat.Send(r.Context(), uid, id, body.Content); err != nil {
		return err
	}
	v, err := s.chat.Get(r.Context(), uid, id)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusAccepted, v)
}

// handleConversationAnswer answers POST /api/conversations/{id}/answer {turnDigest, answer} → 202.
func (s *Server) handleConversationAnswer(w http.ResponseWriter, r *http.Request) error {
	id, err := conversationID(r)
	if err != nil {
		return err
	}
	var body struct {
		TurnDigest string `json:"turnDigest"`
		Answer     string `json:"answer"`
	}
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	uid := ActorFrom(r.Context()).UID
	if err := s.chat.Answer(r.Context(), uid, id, body.TurnDigest, body.Answer); err != nil {
		return err
	}
	v, err := s.chat.Get(r.Context(), uid, id)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusAccepted, v)
}
