package live

import (
	"context"
	"strings"

	"waymark/internal/content"
	"waymark/internal/store"
)

var _ content.Addresser = (*TYPO3)(nil)

// PageBase is the base URL of the site whose root page is page or one of
// its ancestors, in language: the language's base, joined to the site's
// base when it is a path ("/de/"), as TYPO3's site configuration resolves
// it. "" when no site holds the page.
func (t *TYPO3) PageBase(ctx context.Context, q store.Querier, page, language int64) (string, error) {
	for depth, uid := 0, page; uid > 0 && depth < 100; depth++ {
		for _, s := range t.sites {
			if s.RootPageID != uid {
				continue
			}
			base := s.Base
			if l, ok := s.Language(language); ok && l.Base != "" {
				base = joinBase(s.Base, l.Base)
			}
			return base, nil
		}
		p, err := t.Get(ctx, q, "pages", uid)
		if err != nil {
			return "", err
		}
		uid = p.PID
	}
	return "", nil
}

// joinBase resolves a language's base against the site's: an absolute URL
// stands for itself, a path is appended to the site's host.
func joinBase(site, lang string) string {
	if strings.Contains(lang, "://") || strings.HasPrefix(lang, "//") {
		return lang
	}
	if i := strings.Index(site, "://"); i >= 0 {
		if j := strings.Index(site[i+3:], "/"); j >= 0 {
			site = site[:i+3+j]
		}
	}
	return strings.TrimRight(site, "/") + "/" + strings.TrimLeft(lang, "/")
}
