package site

import (
	"context"
	"errors"

	"waymark/internal/access"
	"waymark/internal/content"
)

// Target is a record named on a card or in an outcome, in the reader's words.
type Target struct {
	Table       string   `json:"table"`
	UID         int64    `json:"uid"`
	TableLabel  string   `json:"tableLabel"`
	RecordTitle string   `json:"recordTitle"` // "" when the reader may not read the record
	FieldLabels []string `json:"fieldLabels"`
}

// Describe names a record and fields with the schema's labels in backend
// language lang and the record's title (page title or element header).
func (s *Site) Describe(ctx context.Context, a *access.Actor, table string, uid int64, fields []string, lang string) (Target, error) {
	out := Target{Table: table, UID: uid, TableLabel: table, FieldLabels: []string{}}
	schemas, err := content.LoadSchemas(ctx, s.db)
	if err != nil {
		return out, err
	}
	t, ok := schemas.Table(table)
	for _, f := range fields {
		if ok {
			out.FieldLabels = append(out.FieldLabels, t.FieldLabel(f, lang))
		} else {
			out.FieldLabels = append(out.FieldLabels, f)
		}
	}
	if ok {
		out.TableLabel = t.Label.In(lang, table)
	}
	rec, err := content.Get(ctx, s.db, table, uid)
	if errors.Is(err, content.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	if may, err := s.checker.ActorMayReadRecord(ctx, a, rec); err == nil && may {
		out.RecordTitle = rec.Title()
	}
	return out, nil
}

// Title is the title of a page the actor may show in language (its
// translation's where one exists); "" for one they may not show.
func (s *Site) Title(ctx context.Context, a *access.Actor, page, language int64) string {
	p, err := s.page(ctx, a, page)
	if err != nil {
		return ""
	}
	if language > 0 {
		if tr, err := content.Translation(ctx, s.db, "pages", p.UID, language); err == nil && tr.Fields["title"] != "" {
			return tr.Fields["title"]
		}
	}
	return p.Fields["title"]
}
