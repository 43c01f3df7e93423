package chat

import (
	"context"

	"waymark/internal/cost"
)

// costs puts on a view what its model calls cost: the tour's (every turn of
// the conversation) and the waiting card's (the run that proposed it). A
// failed read leaves them out; the conversation is shown all the same.
func (s *reads) costs(ctx context.Context, v *View, cardRun string) {
	r := cost.New(s.db)
	if t, err := r.OfConversation(ctx, v.ID); err == nil {
		v.Cost = &t
	}
	if v.Card != nil && cardRun != "" {
		if t, err := r.OfRun(ctx, cardRun); err == nil {
			v.Card.Cost = &t
		}
	}
}
