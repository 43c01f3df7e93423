package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"waymark/internal/content"
)

// Messages of highlight_record. Every refused target answers
// MsgNotHighlightTarget, whether it is missing, deleted, elsewhere, in another
// language or in a table the user may not read: existence never leaks.
const (
	MsgNoSubject          = "no subject to highlight"
	MsgNotHighlightTarget = "not a highlight target of this run"
)

// Highlight is the payload of a highlight event and the core of
// highlight_record's answer: table and uid, never field values.
type Highlight struct {
	Table string `json:"table"`
	UID   int64  `json:"uid"`
}

// highlightRecord is highlight_record {table, uid}. It ships disabled.
type highlightRecord struct{ b *builtins }

func (t *highlightRecord) Def() Def {
	return Def{
		Name: "highlight_record",
		Description: "Point the user at a record in the backend: the subject of this process or, when the " +
			"subject is a page, a content element on it in the subject's language or in all languages.",
		Schema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"table": {"type": "string", "minLength": 1, "description": "pages or tt_content"},
				"uid": {"type": "integer", "minimum": 1}
			},
			"required": ["table", "uid"],
			"additionalProperties": false
		}`),
		Effect:         EffectRead,
		Group:          GroupProcess,
		DefaultEnabled: false,
	}
}

// Execute implements ADR-228 item 10 (L10.2, L10.3): it accepts the subject
// record itself or, for a page subject, a live content element on that page in
// the subject's language or in all languages, if the acting user may read
// tt_content. It records a highlight event {table, uid} and answers
// {"highlighted": {table, uid}}.
func (t *highlightRecord) Execute(ctx context.Context, call Call) (Result, error) {
	var args Highlight
	if err := decodeArgs(call.Args, &args); err != nil {
		return ErrorResult(err.Error()), nil
	}
	if call.Subject == nil {
		return ErrorResult(MsgNoSubject), nil
	}
	ok, err := t.target(ctx, call, args)
	if err != nil {
		return Result{}, err
	}
	if !ok {
		return ErrorResult(MsgNotHighlightTarget), nil
	}
	if err := call.emit(EventHighlight, args); err != nil {
		return Result{}, fmt.Errorf("highlight event: %w", err)
	}
	return Result{Content: map[string]any{"highlighted": args}}, nil
}

// target reports whether h may be highlighted in a run on call.Subject. Any
// failed read refuses by returning the error (fail closed).
func (t *highlightRecord) target(ctx context.Context, call Call, h Highlight) (bool, error) {
	subj := *call.Subject
	if h.Table == subj.Table && h.UID == subj.UID {
		return true, nil
	}
	if subj.Table != "pages" || h.Table != "tt_content" {
		return false, nil
	}
	may, err := t.b.checker.CanReadTable(ctx, call.User, "tt_content")
	if err != nil || !may {
		return false, err
	}
	pageUID, lang, found, err := t.subjectPage(ctx, subj)
	if err != nil || !found {
		return false, err
	}
	el, err := t.b.src.Get(ctx, t.b.db, "tt_content", h.UID)
	if errors.Is(err, content.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return el.Live() && el.PID == pageUID && (el.Language == lang || el.Language == content.LanguageAll), nil
}

// subjectPage returns the page uid that holds the subject page's content
// elements and the language they must be in. Content lives on the
// default-language page: a subject naming a translation record points at its
// l10nParent, in the translation's language when the Ref names none. found is
// false for a subject page that is missing or not live: nothing is on it.
func (t *highlightRecord) subjectPage(ctx context.Context, subj content.Ref) (uid, lang int64, found bool, err error) {
	page, err := t.b.src.Get(ctx, t.b.db, "pages", subj.UID)
	if errors.Is(err, content.ErrNotFound) {
		return 0, 0, false, nil
	}
	if err != nil || !page.Live() {
		return 0, 0, false, err
	}
	if page.Language > 0 && page.L10nParent > 0 {
		lang = subj.Language
		if lang == content.LanguageDefault {
			lang = page.Language
		}
		return page.L10nParent, lang, true, nil
	}
	return subj.UID, subj.Language, true, nil
}
