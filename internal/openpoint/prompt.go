package openpoint

import (
	"context"
	"fmt"
	"strings"

	"waymark/internal/store"
)

// PromptLimit is the most open points a system prompt offers again (P.O1).
const PromptLimit = 20

// pointColumns are the columns scanPoint reads, in order.
const pointColumns = "id, skill_uid, page_uid, tbl, uid, field, language, created_at"

func scanPoint(sc store.Scanner) (Point, error) {
	var p Point
	var created int64
	if err := sc.Scan(&p.id, &p.Skill, &p.Page, &p.Table, &p.UID, &p.Field, &p.Language, &created); err != nil {
		return Point{}, fmt.Errorf("read open point: %w", err)
	}
	p.CreatedAt = store.Time(created)
	return p, nil
}

// ForPrompt returns the open points of skill on page that reader may see,
// newest first and at most PromptLimit counted after the visibility rule
// (P.O1): record identities and field names, nothing else. The rule is the
// one of ForPage, the dashboard and list_open_points (Visible): no points on
// a page the reader may not show, a table she may not read, a field she may
// not edit, or a target record that is deleted or gone. A skill or page of
// 0, and a missing or disabled reader, have none.
func (o *Store) ForPrompt(ctx context.Context, reader, skill, page int64) ([]Point, error) {
	if skill <= 0 || page <= 0 {
		return nil, nil
	}
	v, err := o.viewOf(ctx, reader)
	if err != nil || v == nil {
		return nil, err
	}
	points, err := v.scan(ctx, "skill_uid = ? AND page_uid = ?", []any{skill, page}, PromptLimit)
	if err != nil {
		return nil, fmt.Errorf("open points of skill %d on page %d: %w", skill, page, err)
	}
	return points, nil
}

// PromptFor is PromptText of ForPrompt: the block the system prompt of
// reader's conversation with skill on page carries, "" when nothing is open.
func (o *Store) PromptFor(ctx context.Context, reader, skill, page int64) (string, error) {
	points, err := o.ForPrompt(ctx, reader, skill, page)
	if err != nil {
		return "", err
	}
	return PromptText(points), nil
}

// PromptText renders points for the system prompt: a short English block of
// record identities and field names, never a value. No points give "".
func PromptText(points []Point) string {
	if len(points) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Open points from earlier runs of this process on this page (record identities and fields only). " +
		"The user skipped these proposals; they stay open until a change to the same record and field is applied " +
		"or kept. Offer them again where they still apply; list_open_points lists them.\n")
	for _, p := range points {
		field := p.Field
		if field == "" {
			field = "(the record as a whole)"
		}
		fmt.Fprintf(&b, "- %s:%d %s\n", p.Table, p.UID, field)
	}
	return b.String()
}
