package openpoint

import (
	"context"
	"errors"
	"fmt"
	"time"

	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/store"
)

// Entry is an open point as a reader sees it on the dashboard and the
// page list (P.D2): identities, the date and a sentence from schema labels
// and the page title in the reader's backend language — never model text.
type Entry struct {
	Page            int64     `json:"page"`
	Language        int64     `json:"language"` // the target record's language
	Skill           int64     `json:"skill"`
	SkillIdentifier string    `json:"skillIdentifier"` // "" when the skill is gone
	Table           string    `json:"table"`
	UID             int64     `json:"uid"`
	Field           string    `json:"field"` // "" for the record as a whole
	CreatedAt       time.Time `json:"createdAt"`
	Summary         string    `json:"summary"`
}

// Limits of the lists.
const (
	DefaultLimit = 20  // dashboard limit when none is asked for
	MaxLimit     = 200 // the most a dashboard call lists
	PageLimit    = 50  // the most open points ForPage lists
	scanBatch    = 500 // open points read per batch while filtering
)

// Visible lists the open points reader may see across the site, newest
// first, the limit counted after the visibility rule (P.D1–P.D3). The reader
// is read as stored now; a missing or disabled reader sees none. A limit of
// 0 or less is DefaultLimit; more than MaxLimit is MaxLimit.
//
// The rule (the one of ForPage, the prompt's page and list_open_points): the
// reader may show the point's page, read the target table, edit the field
// (an excluded field needs a nonExcludeFields grant; administrators pass) and
// edit the point's language, and the target record exists and is live. A
// point whose record was deleted stays stored (P.Z1) but is not listed: it
// has no value to describe and nothing the reader could open; it shows again
// when the record is restored.
func (o *Store) Visible(ctx context.Context, reader int64, limit int) ([]Entry, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	v, err := o.viewOf(ctx, reader)
	if err != nil || v == nil {
		return []Entry{}, err
	}
	points, err := v.scan(ctx, "", nil, limit)
	if err != nil {
		return nil, err
	}
	return v.describe(ctx, points)
}

// ForPage lists the open points of one page the reader may see, newest first
// and at most PageLimit, all skills or only skill (when > 0), under the rule
// of Visible, each described like on the dashboard. A page the reader may
// not show answers exactly like a missing one: ErrNotFound.
func (o *Store) ForPage(ctx context.Context, reader, page, skill int64) ([]Entry, error) {
	v, points, err := o.onPage(ctx, reader, page, skill)
	if err != nil {
		return nil, err
	}
	return v.describe(ctx, points)
}

// OnPage is ForPage without the descriptions: the identities the read tool
// list_open_points answers the model with (P.O2).
func (o *Store) OnPage(ctx context.Context, reader, page, skill int64) ([]Point, error) {
	_, points, err := o.onPage(ctx, reader, page, skill)
	return points, err
}

func (o *Store) onPage(ctx context.Context, reader, page, skill int64) (*view, []Point, error) {
	v, err := o.viewOf(ctx, reader)
	if err != nil {
		return nil, nil, err
	}
	if v == nil || page <= 0 {
		return nil, nil, ErrNotFound
	}
	if err := v.pages.Load(ctx, []int64{page}); err != nil {
		return nil, nil, err
	}
	if !v.pages.MayShow(page) {
		return nil, nil, ErrNotFound
	}
	where, args := "page_uid = ?", []any{page}
	if skill > 0 {
		where, args = where+" AND skill_uid = ?", append(args, skill)
	}
	points, err := v.scan(ctx, where, args, PageLimit)
	if err != nil {
		return nil, nil, err
	}
	return v, points, nil
}

// view is the visibility rule for one reader, read at one moment.
type view struct {
	q       store.Querier
	src     content.Source
	actor   *access.Actor
	schemas *content.Schemas
	pages   *access.PageTree
}

// viewOf loads reader; nil without error when the reader is missing or disabled.
func (o *Store) viewOf(ctx context.Context, reader int64) (*view, error) {
	a, err := access.LoadActor(ctx, o.dir, o.db, reader)
	if errors.Is(err, access.ErrNoUser) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open points of user %d: %w", reader, err)
	}
	if !a.Active() {
		return nil, nil
	}
	schemas, err := content.LoadSchemas(ctx, o.db)
	if err != nil {
		return nil, err
	}
	return &view{q: o.db, src: o.src, actor: a, schemas: schemas, pages: access.NewPageTree(o.db, o.src, a)}, nil
}

// scan reads open points newest first (restricted by where, when set) in
// batches, keeping those the reader may see, until limit are kept.
func (v *view) scan(ctx context.Context, where string, args []any, limit int) ([]Point, error) {
	var out []Point
	var last *Point
	for len(out) < limit {
		cond, cargs := where, append([]any(nil), args...)
		if last != nil {
			if cond != "" {
				cond += " AND "
			}
			cond += "(created_at, id) < (?, ?)"
			cargs = append(cargs, store.Micros(last.CreatedAt), last.id)
		}
		if cond != "" {
			cond = " WHERE " + cond
		}
		batch, err := v.batch(ctx, "SELECT "+pointColumns+" FROM open_points"+cond+
			" ORDER BY created_at DESC, id DESC LIMIT ?", append(cargs, scanBatch)...)
		if err != nil {
			return nil, err
		}
		kept, err := v.keep(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, kept[:min(len(kept), limit-len(out))]...)
		if len(batch) < scanBatch {
			break
		}
		last = &batch[len(batch)-1]
	}
	return out, nil
}

func (v *view) batch(ctx context.Context, q string, args ...any) ([]Point, error) {
	points, err := store.Collect(ctx, v.q, scanPoint, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read open points: %w", err)
	}
	return points, nil
}

// keep filters points by the rule, in order: first what the actor alone
// decides, then the pages, then whether the target records still exist.
func (v *view) keep(ctx context.Context, points []Point) ([]Point, error) {
	var cand []Point
	var pageUIDs []int64
	for _, p := range points {
		if v.actor.CanReadTable(p.Table) && v.mayEditField(p.Table, p.Field) && v.actor.MayEditLanguage(p.Language) {
			cand = append(cand, p)
			pageUIDs = append(pageUIDs, p.Page)
		}
	}
	if err := v.pages.Load(ctx, pageUIDs); err != nil {
		return nil, err
	}
	shown := cand[:0]
	byTable := map[string][]int64{}
	for _, p := range cand {
		if v.pages.MayShow(p.Page) {
			shown = append(shown, p)
			byTable[p.Table] = append(byTable[p.Table], p.UID)
		}
	}
	live := map[string]map[int64]bool{}
	for table, uids := range byTable {
		set, err := content.LiveAmong(ctx, v.src, v.q, table, uids)
		if err != nil {
			return nil, fmt.Errorf("records of open points: %w", err)
		}
		live[table] = set
	}
	out := shown[:0]
	for _, p := range shown {
		if live[p.Table][p.UID] {
			out = append(out, p)
		}
	}
	return out, nil
}

// mayEditField applies the exclude rule (P.D3); a field the schema does not
// know is for administrators only, the record as a whole ("") for everyone.
func (v *view) mayEditField(table, field string) bool {
	if field == "" {
		return true
	}
	t, ok := v.schemas.Table(table)
	if !ok {
		return v.actor.IsAdmin()
	}
	f, ok := t.Field(field)
	if !ok {
		return v.actor.IsAdmin()
	}
	return v.actor.MayEditField(table, field, f.Exclude)
}
