package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/typo3/tca"
)

// updateSpec describes one builtin write tool: the table it writes, the name
// of its uid argument and the fields it may change.
type updateSpec struct {
	name, description string
	table             string
	idArg             string
	idDescription     string
	fields            []fieldArg
	notFound          string
}

type fieldArg struct{ name, description string }

var pageMetadataSpec = updateSpec{
	name: "update_page_metadata",
	description: "Propose new SEO metadata for a page record. The editor sees the change and decides; " +
		"nothing is written before that. A translation is its own page record: pass its uid.",
	table:         "pages",
	idArg:         "page",
	idDescription: "uid of the page record to write",
	fields: []fieldArg{
		{"seoTitle", "SEO title, 30 to 60 characters"},
		{"description", "meta description, 140 to 160 characters"},
		{"keywords", "comma-separated keywords"},
	},
	notFound: MsgPageNotFound,
}

var contentSpec = updateSpec{
	name: "update_content",
	description: "Propose a new header or text for a content element (tt_content). The editor sees the change " +
		"and decides; nothing is written before that.",
	table:         "tt_content",
	idArg:         "uid",
	idDescription: "uid of the content element",
	fields: []fieldArg{
		{"header", "header, 10 to 70 characters"},
		{"bodytext", "text of the element"},
	},
	notFound: MsgRecordNotFound,
}

func (s updateSpec) allows(field string) bool {
	for _, f := range s.fields {
		if f.name == field {
			return true
		}
	}
	return false
}

// schema builds the arguments schema: the uid and at least one known field, nothing else.
func (s updateSpec) schema() json.RawMessage {
	props := map[string]any{}
	for _, f := range s.fields {
		props[f.name] = map[string]any{"type": "string", "description": f.description}
	}
	doc := map[string]any{
		"type": "object",
		"properties": map[string]any{
			s.idArg:  map[string]any{"type": "integer", "minimum": 1, "description": s.idDescription},
			"fields": map[string]any{"type": "object", "properties": props, "minProperties": 1, "additionalProperties": false},
		},
		"required":             []string{s.idArg, "fields"},
		"additionalProperties": false,
	}
	b, _ := json.Marshal(doc) // maps of strings and numbers always marshal
	return b
}

// updateTool writes fields of one record through the content writer as the acting user.
type updateTool struct {
	b    *builtins
	spec updateSpec
}

var _ WriteTool = (*updateTool)(nil)

func (t *updateTool) Def() Def {
	return Def{
		Name:           t.spec.name,
		Description:    t.spec.description,
		Schema:         t.spec.schema(),
		Effect:         EffectWrite,
		Group:          GroupContent,
		DefaultEnabled: true,
		ApprovalBound:  true,
	}
}

type updateArgs struct {
	uid    int64
	fields map[string]string
	names  []string // sorted
}

func (t *updateTool) args(raw json.RawMessage) (updateArgs, error) {
	var m map[string]json.RawMessage
	if err := decodeArgs(raw, &m); err != nil {
		return updateArgs{}, err
	}
	var a updateArgs
	if err := json.Unmarshal(m[t.spec.idArg], &a.uid); err != nil || a.uid <= 0 {
		return updateArgs{}, &ResultError{Message: fmt.Sprintf("invalid arguments: %s: want a positive integer", t.spec.idArg)}
	}
	if err := json.Unmarshal(m["fields"], &a.fields); err != nil || len(a.fields) == 0 {
		return updateArgs{}, &ResultError{Message: "invalid arguments: fields: want an object of strings with at least one field"}
	}
	for name, v := range a.fields {
		if !t.spec.allows(name) {
			return updateArgs{}, &ResultError{Message: fmt.Sprintf("invalid arguments: fields.%s: unknown property", name)}
		}
		// TYPO3's TCA limits and evaluations, before a card is shown: a value
		// over the field's max can be written by nobody (TYPO3 would cut it,
		// the column refuse it), so it never becomes a card — Denied hands
		// the reason straight back to the model to propose a shorter one;
		// eval trim is applied.
		v, err := tca.Apply(t.spec.table, name, v)
		if err != nil {
			return updateArgs{}, &ResultError{Message: fmt.Sprintf("invalid arguments: fields.%s: %s", name, err.Error()), Denied: true}
		}
		a.fields[name] = v
		a.names = append(a.names, name)
	}
	sort.Strings(a.names)
	return a, nil
}

// Target names the table, the uid and the fields of the call, sorted.
func (t *updateTool) Target(raw json.RawMessage) (Target, bool) {
	a, err := t.args(raw)
	if err != nil {
		return Target{}, false
	}
	return Target{Table: t.spec.table, UID: a.uid, Fields: a.names}, true
}

// Execute writes the fields as call.User and records a tool_write event. A
// record the user may not read answers like a missing one; a refused write
// is an error result and changes nothing. With call.Released, a record whose
// preview is no longer the released one is ErrPreviewChanged, unwritten.
func (t *updateTool) Execute(ctx context.Context, call Call) (Result, error) {
	a, err := t.args(call.Args)
	if err != nil {
		return ErrorResult(err.Error()), nil
	}
	rec, locked, err := readableForWrite(ctx, t.b, call, t.spec.table, a.uid)
	if err != nil {
		return Result{}, err
	}
	if rec == nil {
		return ErrorResult(t.spec.notFound), nil
	}
	if call.Released != nil {
		now, err := t.preview(ctx, call, *rec, a, call.Released.Lang)
		if err != nil {
			return Result{}, err
		}
		if l := call.Released.Preview.Landing; l != nil && l.Workspace != 0 {
			// Shown in a draft workspace: the values now are the user's
			// draft there, which the site's CMS compares with the shown ones
			// itself, under its lock at the write (a ConflictError below);
			// the rest of the preview is compared here.
			now = withCurrentOf(call.Released.Preview, now)
		}
		if !SameItems(now, call.Released.Preview) {
			return Result{}, ErrPreviewChanged
		}
	}
	req := content.WriteRequest{Table: t.spec.table, UID: a.uid, Fields: a.fields, User: call.User, Run: call.Run, Locked: locked}
	if call.Run != "" && call.CallID != "" {
		req.Key = call.Run + "/" + call.CallID // the same on every retry of this approved call
	}
	if call.Released != nil {
		req.Shown = map[string]string{}
		for _, it := range call.Released.Preview.Items {
			req.Shown[it.Field] = it.Current
		}
	}
	var written content.Written
	if call.Tx != nil {
		written, err = t.b.writer.WriteTx(ctx, call.Tx, req)
	} else {
		written, err = t.b.writer.Write(ctx, req)
	}
	var denied *access.DeniedError
	var conflict *content.ConflictError
	switch {
	case errors.As(err, &conflict):
		return Result{}, &ChangedError{Conflict: conflict}
	case errors.As(err, &denied):
		return ErrorResult(denied.Error()), nil
	case errors.Is(err, access.ErrDenied):
		return ErrorResult("permission denied"), nil
	case errors.Is(err, content.ErrNotFound):
		return ErrorResult(t.spec.notFound), nil
	case errors.Is(err, content.ErrInvalid):
		return ErrorResult(err.Error()), nil
	case err != nil:
		return Result{}, err
	}
	changed := map[string]bool{}
	for _, c := range written.Changes {
		changed[c.Field] = true
	}
	unchanged := []string{}
	for _, n := range a.names {
		if !changed[n] {
			unchanged = append(unchanged, n)
		}
	}
	step, emitErr := EmitWrite(call, WriteStep{Table: t.spec.table, UID: a.uid, Fields: a.names, Completeness: Complete, Landing: written.Landing})
	out := map[string]any{
		"written":              map[string]any{"table": t.spec.table, "uid": a.uid, "fields": a.names},
		"unchanged":            unchanged,
		"completeness":         step.Completeness,
		"hookFailedAfterWrite": step.HookFailedAfterWrite,
	}
	if written.Landing != nil {
		// Where the site's CMS put it: live, or a draft workspace to review.
		out["landing"] = written.Landing
	}
	res := Result{Content: out, Write: step}
	if emitErr != nil {
		return res, fmt.Errorf("record %s after writing %s:%d: %w", EventToolWrite, t.spec.table, a.uid, emitErr)
	}
	return res, nil
}

// readableForWrite is readable for a write in call.Tx through the built-in
// writer on the built-in source: the record is read as the writer reads it,
// under its row lock (content.Writer.ReadLockedTx), and handed on to the
// write, so the preview comparison sees what is written over and the record
// is read once. Otherwise it is readable, and the lock nil.
func readableForWrite(ctx context.Context, b *builtins, call Call, table string, uid int64) (*content.Record, *content.Locked, error) {
	w, ok := b.writer.(*content.Writer)
	if call.Tx == nil || !ok || !content.IsBuiltin(b.src) || !content.IsBuiltin(w.Source()) {
		rec, err := readable(ctx, b, call, table, uid)
		return rec, nil, err
	}
	locked, err := w.ReadLockedTx(ctx, call.Tx, table, uid)
	if errors.Is(err, content.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	rec := locked.Record()
	may, err := access.NewChecker(call.Tx, b.src, b.dir).MayReadRecord(ctx, call.User, rec)
	if err != nil || !may {
		return nil, nil, err
	}
	return &rec, locked, nil
}

// withCurrentOf is p with the values now of shown, field by field.
func withCurrentOf(shown, p Preview) Preview {
	current := map[string]string{}
	for _, it := range shown.Items {
		current[it.Field] = it.Current
	}
	p.Items = slices.Clone(p.Items)
	for i, it := range p.Items {
		if v, ok := current[it.Field]; ok {
			p.Items[i].Current = v
		}
	}
	return p
}
