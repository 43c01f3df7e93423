package site

import (
	"context"
	"regexp"
	"strings"

	"golang.org/x/text/unicode/norm"
	"waymark/internal/content"
	"waymark/internal/serp"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// searchFields are the fields of a page a search engine lists: a card that
// changes one of them shows the page's search result.
var searchFields = map[string]bool{"title": true, "seoTitle": true, "description": true}

// SearchPreview is the search result of the page a card's call changes, with
// the call's proposed values in place of the current ones: the SEO title
// (else the page title), the description, the address from the site's base
// (content.Addresser) and the page's slug, and the page's language. nil when
// the call changes no title or description of a page, or the page cannot be
// read (a card is shown without its preview rather than not at all).
func SearchPreview(ctx context.Context, src content.Source, q store.Querier, target *tool.Target, items []tool.PreviewItem) *serp.Preview {
	if target == nil || target.Table != "pages" || target.UID <= 0 {
		return nil
	}
	changes := false
	for _, it := range items {
		changes = changes || searchFields[it.Field]
	}
	if !changes {
		return nil
	}
	src = content.OrBuiltin(src)
	rec, err := src.Get(ctx, q, "pages", target.UID)
	if err != nil {
		return nil
	}
	v := map[string]string{}
	for k, x := range rec.Fields {
		v[k] = x
	}
	for _, it := range items {
		v[it.Field] = it.Proposed
	}
	page, lang := rec.UID, max(rec.Language, 0)
	if rec.Language > 0 && rec.L10nParent > 0 {
		page = rec.L10nParent
	}
	in := serp.Input{Title: cmpOr(v["seoTitle"], v["title"]), Description: v["description"], Slug: v["slug"]}
	if in.Slug == "" {
		in.Slug = derivedSlug(ctx, src, q, page, lang)
	}
	if a, ok := src.(content.Addresser); ok {
		in.Base, _ = a.PageBase(ctx, q, page, lang)
	}
	if langs, err := src.Languages(ctx, q); err == nil {
		for _, l := range langs {
			if l.UID == lang {
				in.Language = l.Locale
			}
		}
	}
	p := serp.Build(in)
	return &p
}

func cmpOr(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// derivedSlug is the slug of a page that has none stored (the built-in
// source keeps no slugs): the titles of its ancestors below the site's root
// page (pid 0) and its own, in its language, each lower-cased with accents
// and umlauts spelled out and other characters as "-" — as TYPO3 makes a
// slug from the rootline. The root page itself is "/".
func derivedSlug(ctx context.Context, src content.Source, q store.Querier, page, lang int64) string {
	var parts []string
	for depth, uid := 0, page; uid > 0 && depth < 20; depth++ {
		p, err := src.Get(ctx, q, "pages", uid)
		if err != nil || p.PID == 0 {
			break
		}
		title := p.Fields["title"]
		if lang > 0 {
			if tr, err := src.Translation(ctx, q, "pages", uid, lang); err == nil && tr.Fields["title"] != "" {
				title = tr.Fields["title"]
			}
		}
		parts = append([]string{slugPart(title)}, parts...)
		uid = p.PID
	}
	return "/" + strings.Join(parts, "/")
}

var spelled = strings.NewReplacer("ä", "ae", "ö", "oe", "ü", "ue", "ß", "ss", "Ä", "ae", "Ö", "oe", "Ü", "ue")

func slugPart(title string) string {
	s := norm.NFD.String(spelled.Replace(title))
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
		}
	}
	return strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(b.String()), "-"), "-")
}
