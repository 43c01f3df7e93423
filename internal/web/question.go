package web

import (
	"context"
	"net/http"

	"waymark/internal/chat"
)

// questionView is the question (choose) a conversation waits for, as the
// chat API's view reports it.
type questionView struct {
	Digest   string
	Text     string
	Options  []string
	FreeText bool
}

func questionOf(v chat.View) *questionView {
	q := v.Question
	if q == nil || q.TurnDigest == "" {
		return nil
	}
	return &questionView{Digest: q.TurnDigest, Text: q.Question, Options: q.Options, FreeText: q.FreeText}
}

// handleQuestion answers the waiting question (chat.Service.AnswerQuestion)
// with an option or, where the question allows it, the editor's own words.
func (u *UI) handleQuestion(w http.ResponseWriter, r *http.Request, me *user) {
	u.act(w, r, me, func(ctx context.Context, id int64) error {
		return u.Chat.AnswerQuestion(ctx, me.A.UID, id, r.PostFormValue("turnDigest"), r.PostFormValue("option"), r.PostFormValue("text"))
	})
}
