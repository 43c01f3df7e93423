package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"waymark/internal/store"
)

// ErrUnknown is returned for a tool name the registry does not hold.
var ErrUnknown = errors.New("unknown tool")

// Spec is what the model is told about a tool.
type Spec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"parameters"`
}

type entry struct {
	tool   Tool
	def    Def
	schema *jsonschema.Schema
	valid  *validArgs
}

// validArgs remembers argument documents that passed the tool's schema: one
// call is validated for its preview, again when the approval re-checks the
// preview and before it runs. Bounded in count and document size.
type validArgs struct {
	mu sync.Mutex
	m  map[string]struct{}
}

const (
	maxValidArgs    = 1024
	maxValidArgsLen = 4096
)

// validate checks raw against the entry's schema, answering from memory for
// a document that passed before.
func (e entry) validate(raw []byte) error {
	key := string(raw)
	e.valid.mu.Lock()
	_, ok := e.valid.m[key]
	e.valid.mu.Unlock()
	if ok {
		return nil
	}
	if err := validateJSON(e.schema, raw); err != nil {
		return err
	}
	if len(raw) <= maxValidArgsLen {
		e.valid.mu.Lock()
		if e.valid.m == nil || len(e.valid.m) >= maxValidArgs {
			e.valid.m = map[string]struct{}{}
		}
		e.valid.m[key] = struct{}{}
		e.valid.mu.Unlock()
	}
	return nil
}

// Registry holds the known tools and reads their global enabled state.
type Registry struct {
	db     *store.DB
	tracer trace.Tracer // nil: no spans

	mu    sync.RWMutex // guards tools
	tools map[string]entry
}

// NewRegistry returns an empty registry whose enabled state lives in db.
// tracer gives every Execute a span; nil is tracing off.
func NewRegistry(db *store.DB, tracer trace.Tracer) *Registry {
	return &Registry{db: db, tracer: tracer, tools: map[string]entry{}}
}

// Register adds t. It fails for an empty or duplicate name, an unknown effect
// and an argument schema that does not compile.
func (r *Registry) Register(t Tool) error {
	d := t.Def()
	if d.Name == "" {
		return errors.New("register tool: empty name")
	}
	if !d.Effect.Valid() {
		return fmt.Errorf("register tool %s: unknown effect %q", d.Name, d.Effect)
	}
	if len(d.Schema) == 0 {
		return fmt.Errorf("register tool %s: no argument schema", d.Name)
	}
	s, err := compileSchema(d.Name, d.Schema)
	if err != nil {
		return fmt.Errorf("register tool %s: %w", d.Name, err)
	}
	d.ApprovalBound = d.NeedsApproval()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[d.Name]; dup {
		return fmt.Errorf("register tool %s: already registered", d.Name)
	}
	r.tools[d.Name] = entry{tool: t, def: d, schema: s, valid: &validArgs{}}
	return nil
}

func (r *Registry) entry(name string) (entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.tools[name]
	return e, ok
}

// Get returns the named tool.
func (r *Registry) Get(name string) (Tool, bool) {
	e, ok := r.entry(name)
	return e.tool, ok
}

// Def returns the named tool's definition, ApprovalBound set for every write.
func (r *Registry) Def(name string) (Def, bool) {
	e, ok := r.entry(name)
	return e.def, ok
}

// List returns the definitions of all tools, sorted by name.
func (r *Registry) List() []Def {
	r.mu.RLock()
	out := make([]Def, 0, len(r.tools))
	for _, e := range r.tools {
		out = append(out, e.def)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Specs returns the model-facing specs of the named tools in the given order,
// skipping names the registry does not hold. It does not look at the enabled state.
func (r *Registry) Specs(names []string) []Spec {
	out := make([]Spec, 0, len(names))
	for _, n := range names {
		if e, ok := r.entry(n); ok {
			out = append(out, Spec{Name: e.def.Name, Description: e.def.Description, Schema: e.def.Schema})
		}
	}
	return out
}

// EnabledSpecs is Specs restricted to the tools enabled now.
func (r *Registry) EnabledSpecs(ctx context.Context, names []string) ([]Spec, error) {
	stored, err := storedStates(ctx, r.db)
	if err != nil {
		return nil, err
	}
	all := r.Specs(names)
	out := all[:0]
	for _, s := range all {
		on, ok := stored[s.Name]
		if !ok {
			e, _ := r.entry(s.Name)
			on = e.def.DefaultEnabled
		}
		if on {
			out = append(out, s)
		}
	}
	return out, nil
}

// Enabled reports the global state of a tool: its tool_settings row, or its
// default. It returns ErrUnknown for a name the registry does not hold.
func (r *Registry) Enabled(ctx context.Context, name string) (bool, error) {
	e, ok := r.entry(name)
	if !ok {
		return false, fmt.Errorf("%w: %s", ErrUnknown, name)
	}
	return r.enabled(ctx, r.db, e)
}

func (r *Registry) enabled(ctx context.Context, q store.Querier, e entry) (bool, error) {
	stored, err := storedStates(ctx, q)
	if err != nil {
		return false, err
	}
	if on, ok := stored[e.def.Name]; ok {
		return on, nil
	}
	return e.def.DefaultEnabled, nil
}

// stateCache keeps the stored tool states for one settings generation,
// which every change of tool_settings moves.
var stateCache = store.NewGenCache[struct{}, map[string]bool]("tool_settings")

// storedStates reads the tool_settings rows as stored now, by tool name.
func storedStates(ctx context.Context, q store.Querier) (map[string]bool, error) {
	return stateCache.Get(ctx, q, struct{}{}, func(ctx context.Context, q store.Querier) (map[string]bool, error) {
		rows, err := q.Query(ctx, "SELECT name, enabled FROM tool_settings")
		if err != nil {
			return nil, fmt.Errorf("tool states: %w", err)
		}
		defer rows.Close()
		stored := map[string]bool{}
		for rows.Next() {
			var name string
			var on bool
			if err := rows.Scan(&name, &on); err != nil {
				return nil, err
			}
			stored[name] = on
		}
		return stored, rows.Err()
	})
}

// SetEnabled stores the global state of a tool.
func (r *Registry) SetEnabled(ctx context.Context, name string, enabled bool) error {
	return r.db.InTx(ctx, func(tx *store.Tx) error { return r.SetEnabledTx(ctx, tx, name, enabled) })
}

// SetEnabledTx stores the global state of a tool inside tx. It returns
// ErrUnknown for a name the registry does not hold.
func (r *Registry) SetEnabledTx(ctx context.Context, tx *store.Tx, name string, enabled bool) error {
	if _, ok := r.entry(name); !ok {
		return fmt.Errorf("%w: %s", ErrUnknown, name)
	}
	return PutState(ctx, tx, name, enabled)
}

// PutState stores the global state of the tool called name on q without
// checking the name against a registry — for the importer, which checks its
// files' names itself (tool_settings is written here only).
func PutState(ctx context.Context, q store.Querier, name string, enabled bool) error {
	if _, err := q.Exec(ctx, `INSERT INTO tool_settings (name, enabled) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET enabled = excluded.enabled`, name, enabled); err != nil {
		return fmt.Errorf("set tool state of %s: %w", name, err)
	}
	return nil
}

// Validate checks args against the tool's schema. A failure is an *ArgsError
// whose message names the bad fields; an unknown tool is ErrUnknown.
func (r *Registry) Validate(name string, args json.RawMessage) error {
	e, ok := r.entry(name)
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknown, name)
	}
	return e.validate(args)
}

// Execute validates the arguments, checks that the tool is enabled and runs
// it. An unknown or disabled tool, bad arguments and refusals are error
// results; the error is for infrastructure faults only. It does not ask for
// approval: the caller runs NeedsApproval calls only once approved.
func (r *Registry) Execute(ctx context.Context, name string, call Call) (Result, error) {
	if r.tracer == nil {
		return r.execute(ctx, name, call)
	}
	ctx, span := r.tracer.Start(ctx, "execute_tool "+name, trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", name),
		attribute.String("waymark.run", call.Run), attribute.Bool("waymark.tool.write", call.Tx != nil)))
	defer span.End()
	res, err := r.execute(ctx, name, call)
	switch {
	case err != nil:
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	case res.IsError:
		span.SetAttributes(attribute.Bool("waymark.tool.error_result", true))
	}
	return res, err
}

func (r *Registry) execute(ctx context.Context, name string, call Call) (Result, error) {
	e, ok := r.entry(name)
	if !ok {
		return ErrorResult(fmt.Sprintf("unknown tool %q", name)), nil
	}
	if err := e.validate(call.Args); err != nil {
		return ErrorResult(err.Error()), nil
	}
	var q store.Querier = r.db
	if call.Tx != nil {
		q = call.Tx // a write reads the tool's state in its transaction
	}
	on, err := r.enabled(ctx, q, e)
	if err != nil {
		return Result{}, err
	}
	if !on {
		return ErrorResult(fmt.Sprintf("tool %q is disabled", name)), nil
	}
	res, err := e.tool.Execute(ctx, call)
	if err != nil {
		if er, ok := AsResult(err); ok {
			return er, nil
		}
		return res, fmt.Errorf("tool %s: %w", name, err)
	}
	return res, nil
}

// Target returns what a call of a write tool would change; false for a read
// tool, an unknown one or arguments that do not parse.
func (r *Registry) Target(name string, args json.RawMessage) (Target, bool) {
	e, ok := r.entry(name)
	if !ok {
		return Target{}, false
	}
	w, ok := e.tool.(WriteTool)
	if !ok || e.validate(args) != nil {
		return Target{}, false
	}
	return w.Target(args)
}

// Preview validates the arguments and builds the preview of a write call with
// labels in lang. Bad arguments, an unknown tool, a tool without a preview and
// a refused target are a *ResultError; other errors are infrastructure faults.
func (r *Registry) Preview(ctx context.Context, name string, call Call, lang string) (Preview, error) {
	e, ok := r.entry(name)
	if !ok {
		return Preview{}, &ResultError{Message: fmt.Sprintf("unknown tool %q", name)}
	}
	w, ok := e.tool.(WriteTool)
	if !ok {
		return Preview{}, &ResultError{Message: fmt.Sprintf("tool %q has no preview", name)}
	}
	if err := e.validate(call.Args); err != nil {
		return Preview{}, &ResultError{Message: err.Error()}
	}
	return w.Preview(ctx, call, lang)
}
