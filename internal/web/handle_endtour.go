package web

import (
	"context"
	"net/http"
)

// handleEndTour ends the guided tour (chat.Service.EndTour); the button asks first.
func (u *UI) handleEndTour(w http.ResponseWriter, r *http.Request, me *user) {
	u.act(w, r, me, func(ctx context.Context, id int64) error {
		_, err := u.Chat.EndTour(ctx, me.A.UID, id)
		return err
	})
}
