package site

import (
	"context"
	"errors"
	"strings"

	"waymark/internal/access"
	"waymark/internal/content"
)

// Preview is a page as the editor sees it in one language: the page record
// shown (the translation where one exists), its title and description, and
// its content elements in that language and in all languages.
type Preview struct {
	Page        int64     `json:"page"`     // the default-language page
	Record      int64     `json:"record"`   // the pages record shown (a translation's own uid)
	Language    int64     `json:"language"` // the language asked for
	Title       string    `json:"title"`
	SEOTitle    string    `json:"seoTitle"`
	Description string    `json:"description"`
	Elements    []Element `json:"elements"`
}

// Element is one content element of a preview. Bodytext is the field's
// value as stored (rich-text HTML in TYPO3); Text is what the page shows of
// it, for the preview to render: paragraphs of lines of plain text
// (content.PlainText), never the HTML itself.
type Element struct {
	Table    string     `json:"table"`
	UID      int64      `json:"uid"`
	Language int64      `json:"language"`
	Type     string     `json:"type"` // CType
	Header   string     `json:"header"`
	Bodytext string     `json:"bodytext"`
	Text     [][]string `json:"-"`
	Image    string     `json:"image,omitempty"`
	ImageAlt string     `json:"imageAlt,omitempty"`
}

// Paragraphs is a rich-text value as the page shows it: its paragraphs, each
// a list of lines of plain text; nil when it shows no text.
func Paragraphs(richText string) [][]string {
	text := content.PlainText(richText)
	if text == "" {
		return nil
	}
	var out [][]string
	for _, p := range strings.Split(text, "\n\n") {
		out = append(out, strings.Split(p, "\n"))
	}
	return out
}

// Preview returns the page uid (or a translation's) in language for the
// actor; ErrNotFound when the actor may not show it.
func (s *Site) Preview(ctx context.Context, a *access.Actor, uid, language int64) (Preview, error) {
	if language < 0 {
		return Preview{}, ErrNotFound
	}
	p, err := s.page(ctx, a, uid)
	if err != nil {
		return Preview{}, err
	}
	shown := p
	if language > 0 {
		tr, err := s.src.Translation(ctx, s.db, "pages", p.UID, language)
		switch {
		case err == nil:
			shown = tr
		case !errors.Is(err, content.ErrNotFound):
			return Preview{}, err
		}
	}
	out := Preview{Page: p.UID, Record: shown.UID, Language: language, Title: shown.Fields["title"],
		SEOTitle: shown.Fields["seoTitle"], Description: shown.Fields["description"], Elements: []Element{}}
	if out.Title == "" {
		out.Title = p.Fields["title"]
	}
	if !a.CanReadTable("tt_content") {
		return out, nil
	}
	recs, err := s.src.OnPage(ctx, s.db, "tt_content", p.UID, language, content.LanguageAll)
	if err != nil {
		return Preview{}, err
	}
	for _, r := range recs {
		f := r.Fields
		out.Elements = append(out.Elements, Element{Table: r.Table, UID: r.UID, Language: r.Language, Type: f["CType"],
			Header: f["header"], Bodytext: f["bodytext"], Text: Paragraphs(f["bodytext"]), Image: f["image"], ImageAlt: f["imageAlt"]})
	}
	return out, nil
}
