package site

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"unicode/utf8"

	"waymark/internal/access"
	"waymark/internal/content"
)

// Suggestion is a page worth improving in one language, with its reasons.
type Suggestion struct {
	Page     int64  `json:"page"`
	Language int64  `json:"language"`
	Title    string `json:"title"`
	Score    int    `json:"score"`
	Reasons  []Gap  `json:"reasons"`
}

// Gap is one reason: open points, or a visible SEO gap of the page record.
type Gap struct {
	Kind  string `json:"kind"` // openPoints, descriptionMissing, descriptionShort, titleMissing, titleShort
	Count int    `json:"count"`
}

// PointCount is the number of visible open points of a page in a language.
type PointCount struct{ Page, Language int64 }

// Suggestions ranks the pages the actor may edit (the page record or its
// content elements: a page they may only read is never suggested), in the
// languages they may edit, by open points (counted from the points the actor sees) and by the
// visible SEO gaps of the page record shown in that language: a missing or
// too short description and a missing or too short SEO title (shorter than
// the schema's recommended minimum). Pages without a reason are left out;
// at most limit are returned.
func (s *Site) Suggestions(ctx context.Context, a *access.Actor, points map[PointCount]int, limit int) ([]Suggestion, error) {
	tree, err := s.Tree(ctx, a)
	if err != nil {
		return nil, err
	}
	langs, err := s.Languages(ctx, a)
	if err != nil {
		return nil, err
	}
	schemas, err := content.LoadSchemas(ctx, s.db)
	if err != nil {
		return nil, err
	}
	// minOf is the recommended minimum length of a page field, -1 when the
	// actor may not edit the field (its gap is then no reason).
	minOf := func(field string) int {
		t, ok := schemas.Table("pages")
		if !ok {
			return 0
		}
		f, ok := t.Field(field)
		if !ok {
			return 0
		}
		if !a.MayEditField("pages", field, f.Exclude) {
			return -1
		}
		if f.Range != nil {
			return f.Range.Min
		}
		return 0
	}
	descMin, titleMin := minOf("description"), minOf("seoTitle")
	var uids []int64
	var collect func(nodes []Node)
	collect = func(nodes []Node) {
		for _, n := range nodes {
			uids = append(uids, n.UID)
			collect(n.Children)
		}
	}
	collect(tree)
	edit, err := s.checker.MayEditPages(ctx, a, uids)
	if err != nil {
		return nil, err
	}
	var out []Suggestion
	var walk func(nodes []Node) error
	walk = func(nodes []Node) error {
		for _, n := range nodes {
			e := edit[n.UID]
			for _, l := range langs {
				if !e.Any() {
					break
				}
				if l.UID != 0 && !slices.Contains(n.Translations, l.UID) {
					continue
				}
				p, err := s.Preview(ctx, a, n.UID, l.UID)
				if errors.Is(err, ErrNotFound) {
					continue
				}
				if err != nil { // a failed read is not a page without gaps
					return err
				}
				sg := Suggestion{Page: n.UID, Language: l.UID, Title: p.Title, Reasons: []Gap{}}
				if c := points[PointCount{n.UID, l.UID}]; c > 0 {
					sg.Reasons = append(sg.Reasons, Gap{Kind: "openPoints", Count: c})
					sg.Score += 3 * c
				}
				switch d := utf8.RuneCountInString(p.Description); {
				case !e.Page || descMin < 0:
				case d == 0:
					sg.Reasons = append(sg.Reasons, Gap{Kind: "descriptionMissing"})
					sg.Score += 2
				case d < descMin:
					sg.Reasons = append(sg.Reasons, Gap{Kind: "descriptionShort", Count: d})
					sg.Score++
				}
				switch t := utf8.RuneCountInString(p.SEOTitle); {
				case !e.Page || titleMin < 0:
				case t == 0:
					sg.Reasons = append(sg.Reasons, Gap{Kind: "titleMissing"})
					sg.Score += 2
				case t < titleMin:
					sg.Reasons = append(sg.Reasons, Gap{Kind: "titleShort", Count: t})
					sg.Score++
				}
				if sg.Score > 0 {
					out = append(out, sg)
				}
			}
			if err := walk(n.Children); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(tree); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(x, y Suggestion) int { return cmp.Compare(y.Score, x.Score) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
