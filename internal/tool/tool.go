package tool

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"

	"waymark/internal/content"
	"waymark/internal/store"
)

// Effect says what running a tool does to the world.
type Effect string

// The effects a tool can declare.
const (
	EffectRead               Effect = "read"                 // no change: runs without approval
	EffectWrite              Effect = "write"                // an idempotent change
	EffectNonIdempotentWrite Effect = "non_idempotent_write" // a change that must run at most once
	EffectExternal           Effect = "external"             // a side effect outside Waymark
)

// Valid reports whether e is one of the declared effects.
func (e Effect) Valid() bool {
	switch e {
	case EffectRead, EffectWrite, EffectNonIdempotentWrite, EffectExternal:
		return true
	}
	return false
}

// Writes reports whether the effect changes something (everything but read).
func (e Effect) Writes() bool { return e != EffectRead }

// Def describes a tool to the registry and, through Spec, to the model.
type Def struct {
	Name        string
	Description string
	Schema      json.RawMessage // JSON Schema of the arguments object
	Effect      Effect
	Group       string // for the admin UI, e.g. "content"
	// DefaultEnabled is the global state when tool_settings holds no row for the tool.
	DefaultEnabled bool
	// ApprovalBound asks for an approval before the call runs. Writes are
	// always approval-bound, whatever this says: use NeedsApproval.
	ApprovalBound bool
	// Input marks a tool that pauses the run for the user's input (choose);
	// the runtime answers it, Execute is not used.
	Input bool
}

// NeedsApproval reports whether a call must be approved before it runs.
func (d Def) NeedsApproval() bool { return d.ApprovalBound || d.Effect.Writes() }

// Call is one invocation of a tool.
type Call struct {
	Run      string          // run uuid, recorded with the history of writes
	CallID   string          // the model's id of the call: with Run, the idempotency key of an approved write
	User     int64           // acting backend user: every check reads this user as stored now
	Language int64           // content language of the run; a tool's own language argument wins
	Args     json.RawMessage // the arguments object the model sent
	Subject  *content.Ref    // the record the process works on, if any
	// Emit records a run event (tool_write, progress, highlight). It may be nil.
	Emit func(kind string, payload any) error
	// Tx, when set, is the transaction a write runs in: the runtime commits the
	// write together with its events and the release of its write fence.
	Tx *store.Tx
	// Released, when set, is the preview the approver released. A write tool
	// with previews compares it with the preview of the record as its
	// transaction reads it, before writing, and refuses with
	// ErrPreviewChanged when they differ: a change that landed after the
	// approver's check is not written over.
	Released *Released
}

// Released is an approved preview with the backend language it was shown in.
type Released struct {
	Preview Preview
	Lang    string
}

// ErrPreviewChanged refuses an approved write whose preview differs from the
// one released (Call.Released); the write changed nothing.
var ErrPreviewChanged = errors.New("the preview changed since it was released")

// ChangedError is the ErrPreviewChanged of a write the site's own database
// refused because the field changed there after the card was shown
// (*content.ConflictError): nothing was written.
type ChangedError struct{ Conflict *content.ConflictError }

func (e *ChangedError) Error() string { return e.Conflict.Error() }

// Is makes a ChangedError match ErrPreviewChanged.
func (e *ChangedError) Is(target error) bool { return target == ErrPreviewChanged }

// Unwrap returns the conflict.
func (e *ChangedError) Unwrap() error { return e.Conflict }

// SameItems reports whether two previews show the same items (fields,
// labels, values and measures): what an approver's release binds.
func SameItems(a, b Preview) bool { return reflect.DeepEqual(a.Items, b.Items) }

// emit calls c.Emit when it is set.
func (c Call) emit(kind string, payload any) error {
	if c.Emit == nil {
		return nil
	}
	return c.Emit(kind, payload)
}

// Tool is something the model can call.
type Tool interface {
	Def() Def
	// Execute runs the call. Refusals and bad input are error results; a
	// returned error means an infrastructure fault.
	Execute(ctx context.Context, call Call) (Result, error)
}

// WriteTool is a tool that changes records: it names what a call would write
// and shows the change before it is approved.
type WriteTool interface {
	Tool
	// Target names the record and fields a call writes; false when args do not parse.
	Target(args json.RawMessage) (Target, bool)
	// Preview shows the change with labels in the backend language lang ("en",
	// "de"). A refusal (record not visible, bad arguments) is a *ResultError.
	Preview(ctx context.Context, call Call, lang string) (Preview, error)
}

// Completeness of a write step.
const (
	Complete = "complete" // every field the step wrote landed
	Partial  = "partial"  // some fields landed, a later one failed
)

// Result is a tool's answer.
type Result struct {
	Content any        // JSON object shown to the model
	IsError bool       // Content is {"error": "…"}
	Write   *WriteStep // set when the call wrote something
}

// WriteStep is what one write call did. It names fields, never values.
type WriteStep struct {
	Table                string   `json:"table"`
	UID                  int64    `json:"uid"`
	Fields               []string `json:"fields"`
	Completeness         string   `json:"completeness"`
	HookFailedAfterWrite bool     `json:"hookFailedAfterWrite"`
	// Landing is where the site's CMS put the change (live or a draft
	// workspace), when it says so (beside TYPO3 with the bridge).
	Landing *content.Landing `json:"landing,omitempty"`
}

// Closes reports whether the step counts as applied for open points:
// complete and without a hook failure (DESIGN.md §6 invariant 9).
func (w WriteStep) Closes() bool { return w.Completeness == Complete && !w.HookFailedAfterWrite }

// EventToolWrite is the kind of the run event a write step records.
const EventToolWrite = "tool_write"

// ErrorResult is the result {"error": msg}.
func ErrorResult(msg string) Result {
	return Result{Content: map[string]string{"error": msg}, IsError: true}
}

// ResultError is an error whose message is meant for the model: callers turn
// it into an error result instead of failing.
type ResultError struct {
	Message string
	// Denied marks a preview refused because the acting user cannot perform
	// the write at all (errors.Is(err, ErrWriteDenied)).
	Denied bool
}

func (e *ResultError) Error() string { return e.Message }

// Is makes a denied preview match ErrWriteDenied.
func (e *ResultError) Is(target error) bool { return e.Denied && target == ErrWriteDenied }

// ErrWriteDenied is matched by the *ResultError a write tool's Preview
// returns when the acting user may not perform the proposed write — the
// table, a field, the page permission or the language refuses it
// ("permission_denied: …"), or the record is missing or one the user cannot
// see, outside her mounts (answered like a missing one, "page not found").
// The runtime answers such a call to the model with the error's message as
// an error result and makes no card of it.
var ErrWriteDenied = errors.New("permission_denied")

// AsResult turns a *ResultError in err's chain into an error result.
func AsResult(err error) (Result, bool) {
	var re *ResultError
	if errors.As(err, &re) {
		return ErrorResult(re.Message), true
	}
	return Result{}, false
}

// Target names the record and fields a write call changes.
type Target struct {
	Table  string   `json:"table"`
	UID    int64    `json:"uid"`
	Fields []string `json:"fields"`
}

// Preview is the structured view of a write an approver decides on.
type Preview struct {
	Heading string        `json:"heading"`
	Target  Target        `json:"target"`
	Items   []PreviewItem `json:"items"`
	// Landing says where the change will land when the site's CMS decides
	// it (beside TYPO3 with the bridge: live, or the editor's draft
	// workspace); nil: live, as the built-in and direct writers write.
	Landing *content.Landing `json:"landing,omitempty"`
}

// PreviewItem is one field of a write: its label, the value now and the value proposed.
type PreviewItem struct {
	Field    string   `json:"field"`
	Label    string   `json:"label"`
	Current  string   `json:"current"`
	Proposed string   `json:"proposed"`
	Measure  *Measure `json:"measure,omitempty"`
}

// Measure sets the length of a proposed value against the field's recommended range.
type Measure struct {
	Count int `json:"count"` // characters (runes) of the proposed value
	Min   int `json:"min"`
	Max   int `json:"max"`
}
