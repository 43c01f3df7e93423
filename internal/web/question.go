package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"waymark/internal/chat"
)

// questionView is the question (choose) a conversation waits for, as the
// chat API's view reports it in "question".
type questionView struct {
	Digest   string   `json:"turnDigest"`
	Text     string   `json:"question"`
	Options  []string `json:"options"`
	FreeText bool     `json:"freeText"`
}

// questionOf reads the view's question through its JSON form, so the screen
// shows exactly what GET /api/conversations/{id} reports (nil for none).
func questionOf(v chat.View) *questionView {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var w struct {
		Question *questionView `json:"question"`
	}
	if json.Unmarshal(raw, &w) != nil || w.Question == nil || w.Question.Digest == "" {
		return nil
	}
	return w.Question
}

// questioner is the chat's answer to a question (chat.Service.AnswerQuestion).
type questioner interface {
	AnswerQuestion(ctx context.Context, actor, id int64, digest, option, text string) error
}

var errNoQuestions = errors.New("answering questions is not supported")

// handleQuestion answers the waiting question with an option or, where the
// question allows it, the editor's own words.
func (u *UI) handleQuestion(w http.ResponseWriter, r *http.Request, me *user) {
	u.act(w, r, me, func(ctx context.Context, id int64) error {
		q, ok := any(u.Chat).(questioner)
		if !ok {
			return errNoQuestions
		}
		return q.AnswerQuestion(ctx, me.A.UID, id, r.PostFormValue("turnDigest"), r.PostFormValue("option"), r.PostFormValue("text"))
	})
}
