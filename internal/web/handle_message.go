package web

import (
	"context"
	"net/http"
)

// handleMessage sends the editor's message (chat.Service.Send).
func (u *UI) handleMessage(w http.ResponseWriter, r *http.Request, me *user) {
	u.act(w, r, me, func(ctx context.Context, id int64) error {
		return u.Chat.Send(ctx, me.A.UID, id, r.PostFormValue("content"))
	})
}
