package tool

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"unicode/utf8"

	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/store"
)

// Preview shows each proposed field with its label in lang, the value now, the
// value proposed and, where the schema recommends a length, the measure. A
// record the user may not read is refused like a missing one, and a write the
// user may not perform as permission_denied: both are a *ResultError matching
// ErrWriteDenied.
func (t *updateTool) Preview(ctx context.Context, call Call, lang string) (Preview, error) {
	a, err := t.args(call.Args)
	if err != nil {
		return Preview{}, err
	}
	rec, err := readable(ctx, t.b, call, t.spec.table, a.uid)
	if err != nil {
		return Preview{}, err
	}
	if rec == nil { // missing, or outside what the user may see (a mount): no write to offer either
		return Preview{}, &ResultError{Message: t.spec.notFound, Denied: true}
	}
	var q store.Querier = t.b.db
	if call.Tx != nil {
		q = call.Tx
	}
	// The write's own check, as the acting user is stored now: a write the
	// user may not perform is refused here, before it could become a card.
	if err := t.b.checker.AuthorizeWrite(ctx, q, call.User, *rec, a.names); err != nil {
		var denied *access.DeniedError
		if errors.As(err, &denied) {
			return Preview{}, &ResultError{Message: "permission_denied: " + denied.Reason, Denied: true}
		}
		return Preview{}, err
	}
	var landing *content.Landing
	if l, ok := t.b.writer.(content.Lander); ok {
		if landing, err = l.Landing(ctx, call.User, t.spec.table, a.uid, a.names); err != nil {
			return Preview{}, err
		}
		if landing.Current != nil {
			// a draft workspace: the values now are the user's there
			shown := *rec
			shown.Fields = maps.Clone(rec.Fields)
			maps.Copy(shown.Fields, landing.Current)
			rec = &shown
		}
	}
	p, err := t.preview(ctx, call, *rec, a, lang)
	if err != nil {
		return Preview{}, err
	}
	p.Landing = landing
	return p, nil
}

// preview lays the call's proposal over rec, with the schema as call reads it.
func (t *updateTool) preview(ctx context.Context, call Call, rec content.Record, a updateArgs, lang string) (Preview, error) {
	var q store.Querier = t.b.db
	if call.Tx != nil {
		q = call.Tx
	}
	schemas, err := content.LoadSchemas(ctx, q)
	if err != nil {
		return Preview{}, err
	}
	table, ok := schemas.Table(t.spec.table)
	if !ok {
		return Preview{}, fmt.Errorf("preview: no schema for %s", t.spec.table)
	}
	return buildPreview(table, rec, a.names, a.fields, lang), nil
}

// buildPreview lays proposed values of names over rec.
func buildPreview(table *content.Table, rec content.Record, names []string, proposed map[string]string, lang string) Preview {
	title := rec.Title()
	if title == "" {
		title = fmt.Sprintf("#%d", rec.UID)
	}
	p := Preview{
		Heading: fmt.Sprintf("%s: %s", table.Label.In(lang, table.Name), title),
		Target:  Target{Table: rec.Table, UID: rec.UID, Fields: names},
		Items:   make([]PreviewItem, 0, len(names)),
	}
	for _, n := range names {
		item := PreviewItem{
			Field:    n,
			Label:    table.FieldLabel(n, lang),
			Current:  rec.Fields[n],
			Proposed: proposed[n],
		}
		if f, ok := table.Field(n); ok && f.Range != nil {
			item.Measure = &Measure{Count: utf8.RuneCountInString(item.Proposed), Min: f.Range.Min, Max: f.Range.Max}
		}
		p.Items = append(p.Items, item)
	}
	return p
}
