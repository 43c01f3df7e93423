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

// handleStop ends the running turn (chat.Service.Stop): the conversation as
// it is now, with the refusal's text when nothing was running any more.
func (u *UI) handleStop(w http.ResponseWriter, r *http.Request, me *user) {
	u.act(w, r, me, func(ctx context.Context, id int64) error {
		_, err := u.Chat.Stop(ctx, me.A.UID, id)
		return err
	})
}
