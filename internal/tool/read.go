package tool

import (
	"context"
	"encoding/json"
	"errors"

	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/store"
)

// readPage is read_page {page, language?}.
type readPage struct{ b *builtins }

func (t *readPage) Def() Def {
	return Def{
		Name: "read_page",
		Description: "Read a page: its fields, its translation in the given language (if any) and the content " +
			"elements on it in that language and in all languages. language defaults to the run's language.",
		Schema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"page": {"type": "integer", "minimum": 1, "description": "uid of the page"},
				"language": {"type": "integer", "minimum": 0, "description": "language uid; 0 is the default language"}
			},
			"required": ["page"],
			"additionalProperties": false
		}`),
		Effect:         EffectRead,
		Group:          GroupContent,
		DefaultEnabled: true,
	}
}

// Execute answers {page, language, translation?, content?}. A page the user
// may not show answers exactly like a missing one.
func (t *readPage) Execute(ctx context.Context, call Call) (Result, error) {
	var args struct {
		Page     int64  `json:"page"`
		Language *int64 `json:"language"`
	}
	if err := decodeArgs(call.Args, &args); err != nil {
		return ErrorResult(err.Error()), nil
	}
	lang := call.Language
	if args.Language != nil {
		lang = *args.Language
	}
	// On the built-in source the page and the content elements on it are
	// one read; they are read again below when the page named is a
	// translation (another page, perhaps another language).
	var (
		page     content.Record
		onPage   []content.Record
		prefetch = content.IsBuiltin(t.b.src)
		err      error
	)
	if prefetch {
		page, onPage, err = content.Builtin{}.GetWithOnPage(ctx, t.b.db, "pages", args.Page, "tt_content", lang, content.LanguageAll)
	} else {
		page, err = t.b.src.Get(ctx, t.b.db, "pages", args.Page)
	}
	if errors.Is(err, content.ErrNotFound) {
		return ErrorResult(MsgPageNotFound), nil
	}
	if err != nil {
		return Result{}, err
	}
	if page.Language > 0 && page.L10nParent > 0 {
		// A translation was named: read its default-language page in the translation's language.
		prefetch = false
		if args.Language == nil {
			lang = page.Language
		}
		if page, err = t.b.src.Get(ctx, t.b.db, "pages", page.L10nParent); errors.Is(err, content.ErrNotFound) {
			return ErrorResult(MsgPageNotFound), nil
		} else if err != nil {
			return Result{}, err
		}
	}
	actor, err := t.b.checker.Actor(ctx, call.User)
	if err != nil {
		return Result{}, err
	}
	ok, err := t.b.checker.ActorMayShowPageRecord(ctx, actor, page)
	if err != nil {
		return Result{}, err
	}
	if !ok || !page.Live() {
		return ErrorResult(MsgPageNotFound), nil
	}
	out := map[string]any{"page": viewOf(page), "language": lang}
	if lang > 0 {
		tr, err := t.b.src.Translation(ctx, t.b.db, "pages", page.UID, lang)
		switch {
		case err == nil:
			out["translation"] = viewOf(tr)
		case !errors.Is(err, content.ErrNotFound):
			return Result{}, err
		}
	}
	if actor.CanReadTable("tt_content") {
		recs := onPage
		if !prefetch {
			if recs, err = t.b.src.OnPage(ctx, t.b.db, "tt_content", page.UID, lang, content.LanguageAll); err != nil {
				return Result{}, err
			}
		}
		views := make([]recordView, 0, len(recs))
		for _, r := range recs {
			views = append(views, viewOf(r))
		}
		out["content"] = views
	}
	return Result{Content: out}, nil
}

// readRecord is read_record {table, uid}.
type readRecord struct{ b *builtins }

func (t *readRecord) Def() Def {
	return Def{
		Name:        "read_record",
		Description: "Read one record (a page or a content element) by table and uid.",
		Schema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"table": {"type": "string", "minLength": 1, "description": "table name, e.g. pages or tt_content"},
				"uid": {"type": "integer", "minimum": 1}
			},
			"required": ["table", "uid"],
			"additionalProperties": false
		}`),
		Effect:         EffectRead,
		Group:          GroupContent,
		DefaultEnabled: true,
	}
}

// Execute answers the record's view. A record the user may not read answers
// exactly like a missing one.
func (t *readRecord) Execute(ctx context.Context, call Call) (Result, error) {
	var args struct {
		Table string `json:"table"`
		UID   int64  `json:"uid"`
	}
	if err := decodeArgs(call.Args, &args); err != nil {
		return ErrorResult(err.Error()), nil
	}
	rec, err := readable(ctx, t.b, call, args.Table, args.UID)
	if err != nil {
		return Result{}, err
	}
	if rec == nil {
		return ErrorResult(MsgRecordNotFound), nil
	}
	return Result{Content: viewOf(*rec)}, nil
}

// readable returns the record when user may read it, nil when it is missing or forbidden.
func readable(ctx context.Context, b *builtins, call Call, table string, uid int64) (*content.Record, error) {
	var q store.Querier = b.db
	checker := b.checker
	if call.Tx != nil { // a write: read in its transaction
		q, checker = call.Tx, access.NewChecker(call.Tx, b.src, b.dir)
	}
	rec, err := b.src.Get(ctx, q, table, uid)
	if errors.Is(err, content.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ok, err := checker.MayReadRecord(ctx, call.User, rec)
	if err != nil || !ok {
		return nil, err
	}
	return &rec, nil
}
