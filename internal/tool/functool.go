package tool

import (
	"context"
	"encoding/json"
	"errors"
)

// FuncTool is a Tool built from functions, for tools outside this package and
// for tests. With TargetFunc and PreviewFunc set it is a WriteTool too.
type FuncTool struct {
	D           Def
	Run         func(ctx context.Context, call Call) (Result, error)
	TargetFunc  func(args json.RawMessage) (Target, bool)
	PreviewFunc func(ctx context.Context, call Call, lang string) (Preview, error)
}

var _ WriteTool = (*FuncTool)(nil)

// NewFuncTool returns a tool described by d that runs run.
func NewFuncTool(d Def, run func(ctx context.Context, call Call) (Result, error)) *FuncTool {
	return &FuncTool{D: d, Run: run}
}

// Def returns the definition.
func (f *FuncTool) Def() Def { return f.D }

// Execute calls Run; a tool without Run answers with an error result.
func (f *FuncTool) Execute(ctx context.Context, call Call) (Result, error) {
	if f.Run == nil {
		return ErrorResult(f.D.Name + " cannot be executed"), nil
	}
	return f.Run(ctx, call)
}

// Target calls TargetFunc; false without one.
func (f *FuncTool) Target(args json.RawMessage) (Target, bool) {
	if f.TargetFunc == nil {
		return Target{}, false
	}
	return f.TargetFunc(args)
}

// Preview calls PreviewFunc; without one it refuses with a *ResultError.
func (f *FuncTool) Preview(ctx context.Context, call Call, lang string) (Preview, error) {
	if f.PreviewFunc == nil {
		return Preview{}, &ResultError{Message: f.D.Name + " has no preview"}
	}
	return f.PreviewFunc(ctx, call, lang)
}

// EmitWrite records step as a tool_write event through call.Emit (when set)
// and returns it as the result's write step. The payload names table, uid and
// fields, never values.
func EmitWrite(call Call, step WriteStep) (*WriteStep, error) {
	if step.Completeness == "" {
		return nil, errors.New("write step without completeness")
	}
	if step.Fields == nil {
		step.Fields = []string{}
	}
	if err := call.emit(EventToolWrite, step); err != nil {
		return &step, err
	}
	return &step, nil
}
