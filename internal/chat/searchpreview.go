package chat

import (
	"context"

	"waymark/internal/site"
)

// searchPreviews puts on each call of a view's card that changes a page's
// title or description the page's search result with the proposed values
// (site.SearchPreview); the stored card keeps none, it is drawn at each read.
func (s *reads) searchPreviews(ctx context.Context, card *Card) {
	if card == nil {
		return
	}
	calls := make([]CardCall, len(card.Calls))
	copy(calls, card.Calls)
	for i := range calls {
		calls[i].SearchPreview = site.SearchPreview(ctx, s.src, s.db, calls[i].Target, calls[i].Preview)
	}
	card.Calls = calls
}
