package web

import (
	"context"
	"net/http"
	"strconv"
)

// handleSkill sets the conversation's process from the slash menu, or
// removes it (skill 0, the chip's ×).
func (u *UI) handleSkill(w http.ResponseWriter, r *http.Request, me *user) {
	u.act(w, r, me, func(ctx context.Context, id int64) error {
		skill, err := strconv.ParseInt(r.PostFormValue("skill"), 10, 64)
		if err != nil || skill < 0 {
			skill = -1 // refused by the service as unavailable
		}
		_, err = u.Chat.SetSkill(ctx, me.A.UID, id, skill)
		return err
	})
}
