package tool

import (
	"context"
	"encoding/json"
	"errors"

	"waymark/internal/openpoint"
)

// listOpenPoints is list_open_points {page, skill?} (ADR-022, P.O2): the
// open points of one page under the visibility rule of package openpoint
// (the one of the page list, the dashboard and the prompt), at most
// openpoint.PageLimit. It answers to two names: list_open_points and
// chat_list_open_points, the name ADR-022 gives it ("the read tool
// chat_list_open_points"), so a skill that declares the spec's name gets it.
type listOpenPoints struct {
	b    *builtins
	name string // ListOpenPointsTool or ChatListOpenPointsTool
}

// The two names of the open-points list tool.
const (
	ListOpenPointsTool     = "list_open_points"
	ChatListOpenPointsTool = "chat_list_open_points" // ADR-022's name
)

func (t *listOpenPoints) Def() Def {
	desc := "List the open points of a page: proposals of earlier runs of a process the user skipped, " +
		"as record identities and field names (no values). skill restricts them to one process skill."
	if t.name == ChatListOpenPointsTool {
		desc = "The same as " + ListOpenPointsTool + ". " + desc
	}
	return Def{
		Name:        t.name,
		Description: desc,
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
	points, err := t.b.points.OnPage(ctx, call.User, args.Page, args.Skill)
	if errors.Is(err, openpoint.ErrNotFound) {
		return ErrorResult(MsgPageNotFound), nil
	}
	if err != nil {
		return Result{}, err
	}
	out := make([]openPointView, 0, len(points))
	for _, p := range points {
		out = append(out, openPointView{Table: p.Table, UID: p.UID, Field: p.Field, Skill: p.Skill})
	}
	return Result{Content: map[string]any{"page": args.Page, "openPoints": out}}, nil
}
