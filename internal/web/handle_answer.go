package web

import (
	"context"
	"net/http"
	"strings"

	"waymark/internal/chat"
)

// handleAnswer answers the waiting card (chat.Service.AnswerWith): the
// server decides which answers the card has. The card's instruction field
// goes with "Andere Variante" only: the form sends it with every button, and
// text typed before another answer was chosen is no wish for a variant.
func (u *UI) handleAnswer(w http.ResponseWriter, r *http.Request, me *user) {
	u.act(w, r, me, func(ctx context.Context, id int64) error {
		answer := r.PostFormValue("answer")
		var o chat.AnswerOptions
		if answer == chat.AnswerVariant {
			o.Instruction = strings.TrimSpace(r.PostFormValue("instruction"))
		}
		return u.Chat.AnswerWith(ctx, me.A.UID, id, r.PostFormValue("turnDigest"), answer, o)
	})
}
