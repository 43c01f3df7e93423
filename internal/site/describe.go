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
	out, errs, err := s.DescribeAll(ctx, a, []Ref{{Table: table, UID: uid, Fields: fields}}, lang)
	if err != nil {
		return Target{Table: table, UID: uid, TableLabel: table, FieldLabels: []string{}}, err
	}
	return out[0], errs[0]
}

// Ref is a record and the fields of it to name (Describe).
type Ref struct {
	Table  string
	UID    int64
	Fields []string
}

// DescribeAll describes each ref as Describe does, reading the schemas once
// and each record and the reader's right to read it once however many refs
// name it (a chat view names the tour's page in every outcome and on its
// card). errs[i] is the error of refs[i]'s record read (its target keeps
// the labels, without a title); err, a failed read of the schemas, fails all.
func (s *Site) DescribeAll(ctx context.Context, a *access.Actor, refs []Ref, lang string) (out []Target, errs []error, err error) {
	schemas, err := content.LoadSchemas(ctx, s.db)
	if err != nil {
		return nil, nil, err
	}
	type record struct {
		table string
		uid   int64
	}
	type titled struct {
		title string // "" when the record is gone or the reader may not read it
		err   error
	}
	titles := map[record]titled{}
	out, errs = make([]Target, len(refs)), make([]error, len(refs))
	for i, ref := range refs {
		t := Target{Table: ref.Table, UID: ref.UID, TableLabel: ref.Table, FieldLabels: []string{}}
		st, ok := schemas.Table(ref.Table)
		for _, f := range ref.Fields {
			if ok {
				t.FieldLabels = append(t.FieldLabels, st.FieldLabel(f, lang))
			} else {
				t.FieldLabels = append(t.FieldLabels, f)
			}
		}
		if ok {
			t.TableLabel = st.Label.In(lang, ref.Table)
		}
		key := record{ref.Table, ref.UID}
		got, seen := titles[key]
		if !seen {
			got.title, got.err = s.readableTitle(ctx, a, ref.Table, ref.UID)
			titles[key] = got
		}
		t.RecordTitle = got.title
		out[i], errs[i] = t, got.err
	}
	return out, errs, nil
}

// readableTitle is the record's title if the actor may read it; "" for a
// record that is gone or that they may not read.
func (s *Site) readableTitle(ctx context.Context, a *access.Actor, table string, uid int64) (string, error) {
	rec, err := s.src.Get(ctx, s.db, table, uid)
	if errors.Is(err, content.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if may, err := s.checker.ActorMayReadRecord(ctx, a, rec); err == nil && may {
		return rec.Title(), nil
	}
	return "", nil
}

// Title is the title of a page the actor may show in language (its
// translation's where one exists); "" for one they may not show.
func (s *Site) Title(ctx context.Context, a *access.Actor, page, language int64) string {
	p, err := s.page(ctx, a, page)
	if err != nil {
		return ""
	}
	if language > 0 {
		if tr, err := s.src.Translation(ctx, s.db, "pages", p.UID, language); err == nil && tr.Fields["title"] != "" {
			return tr.Fields["title"]
		}
	}
	return p.Fields["title"]
}
