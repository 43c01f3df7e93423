package openpoint

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"waymark/internal/catalog"
	"waymark/internal/content"
	"waymark/internal/skill"
)

// Sentence is the summary of an open point (P.D2) in backend language lang
// ("en", "de"; others fall back to English), built from the catalogue labels
// openPoint.missing and openPoint.open of ADR-022: label is the field's label
// (the table's for a record as a whole), title the page title, missing
// whether the field's current value is empty.
func Sentence(lang, label, title string, missing bool) string {
	key := "openPoint.open"
	if missing {
		key = "openPoint.missing"
	}
	return catalog.For(lang).Get(key, label, title)
}

// describe turns kept points into what the reader sees: the skill's stored
// identifier and the sentence built from schema labels, the target's current
// value (empty or not) and the page title in the point's language.
func (v *view) describe(ctx context.Context, points []Point) ([]Entry, error) {
	lang := v.actor.BackendLanguage
	idents := map[int64]string{}
	titles := map[[2]int64]string{}
	out := make([]Entry, 0, len(points))
	for _, p := range points {
		ident, ok := idents[p.Skill]
		if !ok {
			var err error
			if ident, _, err = skill.IdentifierOf(ctx, v.q, p.Skill); err != nil {
				return nil, err
			}
			idents[p.Skill] = ident
		}
		title, ok := titles[[2]int64{p.Page, p.Language}]
		if !ok {
			var err error
			if title, err = v.pageTitle(ctx, p.Page, p.Language); err != nil {
				return nil, err
			}
			titles[[2]int64{p.Page, p.Language}] = title
		}
		label, missing := p.Table, false
		if t, ok := v.schemas.Table(p.Table); ok {
			label = t.Label.In(lang, p.Table)
			if p.Field != "" {
				label = t.FieldLabel(p.Field, lang)
			}
		} else if p.Field != "" {
			label = p.Field
		}
		if p.Field != "" {
			rec, err := v.src.Get(ctx, v.q, p.Table, p.UID)
			if err != nil && !errors.Is(err, content.ErrNotFound) {
				return nil, err
			}
			missing = strings.TrimSpace(rec.Fields[p.Field]) == ""
		}
		out = append(out, Entry{Page: p.Page, Language: p.Language, Skill: p.Skill, SkillIdentifier: ident,
			Table: p.Table, UID: p.UID, Field: p.Field, CreatedAt: p.CreatedAt, Summary: Sentence(lang, label, title, missing)})
	}
	return out, nil
}

// pageTitle is the title of page in language: the translation's title when
// the point's language is a translation and one exists, else the page's own.
// A page without title is named by its table label and uid.
func (v *view) pageTitle(ctx context.Context, page, language int64) (string, error) {
	rec, err := v.src.Get(ctx, v.q, "pages", page)
	if err != nil && !errors.Is(err, content.ErrNotFound) {
		return "", err
	}
	title := rec.Fields["title"]
	if language > 0 && rec.Language != language {
		parent := page
		if rec.Language > 0 && rec.L10nParent > 0 {
			parent = rec.L10nParent
		}
		tr, err := v.src.Translation(ctx, v.q, "pages", parent, language)
		switch {
		case err == nil && tr.Fields["title"] != "":
			title = tr.Fields["title"]
		case err != nil && !errors.Is(err, content.ErrNotFound):
			return "", err
		}
	}
	if title == "" {
		label := "Page"
		if t, ok := v.schemas.Table("pages"); ok {
			label = t.Label.In(v.actor.BackendLanguage, label)
		}
		title = label + " " + strconv.FormatInt(page, 10)
	}
	return title, nil
}
