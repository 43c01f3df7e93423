package web

import (
	"context"
	"net/http"
)

// handleAnswer answers the waiting card (chat.Service.Answer): the server
// decides which answers the card has.
func (u *UI) handleAnswer(w http.ResponseWriter, r *http.Request, me *user) {
	u.act(w, r, me, func(ctx context.Context, id int64) error {
		return u.Chat.Answer(ctx, me.A.UID, id, r.PostFormValue("turnDigest"), r.PostFormValue("answer"))
	})
}
