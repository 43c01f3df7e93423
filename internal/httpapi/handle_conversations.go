package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"waymark/internal/chat"
	"waymark/internal/httpapi/sse"
)

func conversationID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, chat.ErrNotFound
	}
	return id, nil
}

// handleConversationStart answers POST /api/conversations {page, language, skill?, configuration?} → 201.
func (s *Server) handleConversationStart(w http.ResponseWriter, r *http.Request) error {
	var body conversationStartRequest
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	v, err := s.chat.Start(r.Context(), ActorFrom(r.Context()).UID, body.Page, body.Language, body.Skill, body.Configuration)
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

// handleConversationGet answers GET /api/conversations/{id}, and
// GET /api/conversations/{id}?wait=DURATION&after=UPDATED_AT: the
// conversation as soon as its updatedAt is no longer after, at the latest
// once wait (at most chat.MaxWait) has passed (a client waits for
// the next card instead of polling).
func (s *Server) handleConversationGet(w http.ResponseWriter, r *http.Request) error {
	id, err := conversationID(r)
	if err != nil {
		return err
	}
	wait, after, err := waitParams(r)
	if err != nil {
		return err
	}
	uid := ActorFrom(r.Context()).UID
	var v chat.View
	if wait == 0 {
		v, err = s.chat.Get(r.Context(), uid, id)
	} else {
		v, err = s.chat.WaitChange(r.Context(), uid, id, after, wait, Draining(r.Context()))
	}
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, v)
}

// waitParams reads ?wait=&after= of a conversation read: both or neither;
// wait a Go duration above 0 and at most chat.MaxWait ("10s", "500ms"),
// after an RFC 3339 time (a conversation's updatedAt).
func waitParams(r *http.Request) (time.Duration, time.Time, error) {
	q := r.URL.Query()
	rawWait, rawAfter := q.Get("wait"), q.Get("after")
	if rawWait == "" && rawAfter == "" && !q.Has("wait") && !q.Has("after") {
		return 0, time.Time{}, nil
	}
	wait, err := time.ParseDuration(rawWait)
	if err != nil || wait <= 0 || wait > chat.MaxWait {
		return 0, time.Time{}, errBadRequest.With("wait: want a duration above 0 and at most %v (like 10s), got %q", chat.MaxWait, rawWait)
	}
	after, err := time.Parse(time.RFC3339Nano, rawAfter)
	if err != nil {
		return 0, time.Time{}, errBadRequest.With("after: want the conversation's updatedAt (RFC 3339), got %q", rawAfter)
	}
	return wait, after, nil
}

// handleConversationMessage answers POST /api/conversations/{id}/messages {content} → 202.
func (s *Server) handleConversationMessage(w http.ResponseWriter, r *http.Request) error {
	id, err := conversationID(r)
	if err != nil {
		return err
	}
	var body messageRequest
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

// handleConversationAnswer answers POST /api/conversations/{id}/answer → 202:
// {turnDigest, answer} for a card (a variant with an optional instruction),
// {turnDigest, option} or {turnDigest, text} for a question.
func (s *Server) handleConversationAnswer(w http.ResponseWriter, r *http.Request) error {
	id, err := conversationID(r)
	if err != nil {
		return err
	}
	var body answerRequest
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	uid := ActorFrom(r.Context()).UID
	switch {
	case body.Answer != "" && (body.Option != "" || body.Text != ""):
		return errBadRequest.With("answer: give answer for a card, or option or text for a question")
	case body.Instruction != "" && body.Answer == "":
		return errBadRequest.With("instruction: only a variant takes one")
	case body.Option != "" || body.Text != "":
		err = s.chat.AnswerQuestion(r.Context(), uid, id, body.TurnDigest, body.Option, body.Text)
	default:
		err = s.chat.AnswerWith(r.Context(), uid, id, body.TurnDigest, body.Answer, chat.AnswerOptions{Instruction: body.Instruction})
	}
	if err != nil {
		return err
	}
	v, err := s.chat.Get(r.Context(), uid, id)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusAccepted, v)
}

// handleConversationEndTour answers POST /api/conversations/{id}/end-tour → 200 Conversation.
func (s *Server) handleConversationEndTour(w http.ResponseWriter, r *http.Request) error {
	id, err := conversationID(r)
	if err != nil {
		return err
	}
	v, err := s.chat.EndTour(r.Context(), ActorFrom(r.Context()).UID, id)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, v)
}

// handleConversationStop answers POST /api/conversations/{id}/stop: the
// running turn ends through the runtime's guarded cancel (409 not_running
// when it had ended already).
func (s *Server) handleConversationStop(w http.ResponseWriter, r *http.Request) error {
	id, err := conversationID(r)
	if err != nil {
		return err
	}
	v, err := s.chat.Stop(r.Context(), ActorFrom(r.Context()).UID, id)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, v)
}

// handleConversationSkill answers POST /api/conversations/{id}/skill {skill} (0 removes it).
func (s *Server) handleConversationSkill(w http.ResponseWriter, r *http.Request) error {
	id, err := conversationID(r)
	if err != nil {
		return err
	}
	var body conversationSkillRequest
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	v, err := s.chat.SetSkill(r.Context(), ActorFrom(r.Context()).UID, id, body.Skill)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, v)
}

// handleConversationStream answers GET /api/conversations/{id}/stream: every
// change of the conversation as a server-sent event, live (progress and
// highlight as they are reported, not only at pauses).
func (s *Server) handleConversationStream(w http.ResponseWriter, r *http.Request) error {
	id, err := conversationID(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	uid := ActorFrom(ctx).UID
	if _, err := s.chat.Get(ctx, uid, id); err != nil {
		return err
	}
	// A change this process commits sends the next event at once; the poll
	// brings live progress and another process's changes.
	return s.streamWatching(w, r, screenPoll, sse.LastEventID(r), sse.Snapshot("conversation", func(ctx context.Context) (any, error) {
		return s.chat.Get(ctx, uid, id)
	}), func() (<-chan struct{}, func()) { return s.chat.WatchChange(id) })
}

// The bodies of the conversation routes.
type (
	conversationStartRequest struct {
		Page          int64 `json:"page"`
		Language      int64 `json:"language"`
		Skill         int64 `json:"skill"`
		Configuration int64 `json:"configuration"`
	}
	messageRequest struct {
		Content string `json:"content"`
	}
	answerRequest struct {
		TurnDigest string `json:"turnDigest"`
		Answer     string `json:"answer"`
		Option     string `json:"option"`
		Text       string `json:"text"`
		// Instruction: a variant's wish for the model (chat.AnswerOptions).
		Instruction string `json:"instruction"`
	}
	conversationSkillRequest struct {
		Skill int64 `json:"skill"`
	}
)
