package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"waymark/internal/access"
	"waymark/internal/content"
)

// openPointsLimit is the most open points list_open_points answers with.
const openPointsLimit = 50

// listOpenPoints is list_open_points {page, skill?} (ADR-022, P.O2). It reads
// the table open_points itself — package chat, which records the points,
// imports this package — under the visibility rule of chat.OpenPoints.ForPage.
type listOpenPoints struct{ b *builtins }

func (t *listOpenPoints) Def() Def {
	return Def{
		Name: "list_open_points",
		Description: "List the open points of a page: proposals of earlier runs of a process the user skipped, " +
			"as record identities and field names (no values). skill restricts them to one process skill.",
		Schema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"page": {"type": "integer", "minimum": 1, "description": "uid of the page"},
				"skill": {"type": "integer", "minimum": 1, "description": "uid of the process skill"}
			},
			"required": ["page"],
			"additionalProperties": false
		}`),
		Effect:         EffectRead,
		Group:          GroupContent,
		DefaultEnabled: true,
	}
}

// openPointView is one open point as the model sees it: identities only.
type openPointView struct {
	Table string `json:"table"`
	UID   int64  `json:"uid"`
	Field string `json:"field"`
	Skill int64  `json:"skill"`
}

// Execute answers {page, openPoints: [{table, uid, field, skill}]}, newest
// first. A page the user may not show answers exactly like a missing one;
// points on tables the user may not read, on excluded fields without a grant,
// on records that are gone or in languages the user may not edit are left out.
func (t *listOpenPoints) Execute(ctx context.Context, call Call) (Result, error) {
	var args struct {
		Page  int64 `json:"page"`
		Skill int64 `json:"skill"`
	}
	if err := decodeArgs(call.Args, &args); err != nil {
		return ErrorResult(err.Error()), nil
	}
	actor, err := t.b.checker.Actor(ctx, call.User)
	if err != nil {
		return Result{}, err
	}
	if ok, err := t.b.checker.ActorMayShowPage(ctx, actor, args.Page); err != nil {
		return Result{}, err
	} else if !ok || args.Page <= 0 {
		return ErrorResult(MsgPageNotFound), nil
	}
	points, err := t.pointsOn(ctx, args.Page, args.Skill)
	if err != nil {
		return Result{}, err
	}
	schemas, err := content.LoadSchemas(ctx, t.b.db)
	if err != nil {
		return Result{}, err
	}
	out := []openPointView{}
	live := map[content.Ref]bool{}
	for _, p := range points {
		if len(out) == openPointsLimit {
			break
		}
		if !actor.CanReadTable(p.Table) || !actor.MayEditLanguage(p.language) || !mayEditPointField(actor, schemas, p.Table, p.Field) {
			continue
		}
		ref := content.Ref{Table: p.Table, UID: p.UID}
		ok, seen := live[ref]
		if !seen {
			rec, err := content.Get(ctx, t.b.db, p.Table, p.UID)
			if err != nil && !errors.Is(err, content.ErrNotFound) {
				return Result{}, err
			}
			ok = err == nil && rec.Live()
			live[ref] = ok
		}
		if ok {
			out = append(out, p.openPointView)
		}
	}
	return Result{Content: map[string]any{"page": args.Page, "openPoints": out}}, nil
}

// storedPoint is a row of open_points.
type storedPoint struct {
	openPointView
	language int64
}

// pointsOn reads the open points of page (of skill, when > 0), newest first.
func (t *listOpenPoints) pointsOn(ctx context.Context, page, skill int64) ([]storedPoint, error) {
	q := "SELECT skill_uid, tbl, uid, field, language FROM open_points WHERE page_uid = ?"
	args := []any{page}
	if skill > 0 {
		q += " AND skill_uid = ?"
		args = append(args, skill)
	}
	rows, err := t.b.db.Query(ctx, q+" ORDER BY created_at DESC, id DESC LIMIT 1000", args...)
	if err != nil {
		return nil, fmt.Errorf("open points of page %d: %w", page, err)
	}
	defer rows.Close()
	var out []storedPoint
	for rows.Next() {
		var p storedPoint
		if err := rows.Scan(&p.Skill, &p.Table, &p.UID, &p.Field, &p.language); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// mayEditPointField is the exclude rule: a field the schema does not know is
// for administrators only, the record as a whole ("") for everyone.
func mayEditPointField(a *access.Actor, schemas *content.Schemas, table, field string) bool {
	if field == "" {
		return true
	}
	if tb, ok := schemas.Table(table); ok {
		if f, ok := tb.Field(field); ok {
			return a.MayEditField(table, field, f.Exclude)
		}
	}
	return a.IsAdmin()
}
