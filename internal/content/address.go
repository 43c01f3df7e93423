package content

import (
	"context"

	"waymark/internal/store"
)

// Addresser is a Source that knows where its pages are published: the base
// URL of the site a page belongs to, in a language ("https://example.org/de/"),
// as the search-result preview of a card shows it. A Source without it (the
// built-in one: Waymark's own tables know no public address) has pages
// without a base; their preview shows the slug alone.
type Addresser interface {
	PageBase(ctx context.Context, q store.Querier, page, language int64) (string, error)
}
