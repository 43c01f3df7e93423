package tool

import (
	"context"
	"encoding/json"
	"fmt"
)

// GroupProcess is the group of the builtin tools that report on a guided
// process rather than touch content: set_progress and highlight_record.
const GroupProcess = "process"

// Kinds of the run events the process tools record.
const (
	EventProgress  = "progress"
	EventHighlight = "highlight"
)

// MsgProgressExceeds is the error result of set_progress when current > total.
const MsgProgressExceeds = "current must not exceed total"

// Progress is the payload of a progress event and the core of set_progress's
// answer. It carries no label: the label is content, kept out of the event.
type Progress struct {
	Current   int64 `json:"current"`
	Total     int64 `json:"total"`
	Completed bool  `json:"completed"`
}

// progressView is how set_progress answers the model: the progress and, when
// given, its label.
type progressView struct {
	Progress
	Label string `json:"label,omitempty"`
}

// setProgress is set_progress {current, total, completed?, label?}.
type setProgress struct{}

func (setProgress) Def() Def {
	return Def{
		Name: "set_progress",
		Description: "Report how far the process has come: step current of total. Set completed when the " +
			"process has reached its goal. label names the step for the user.",
		Schema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"current": {"type": "integer", "minimum": 0, "description": "steps done so far, at most total"},
				"total": {"type": "integer", "minimum": 1, "description": "steps in all"},
				"completed": {"type": "boolean", "description": "true when the process has reached its goal"},
				"label": {"type": "string", "maxLength": 120, "description": "short name of the current step"}
			},
			"required": ["current", "total"],
			"additionalProperties": false
		}`),
		Effect:         EffectRead,
		Group:          GroupProcess,
		DefaultEnabled: true,
	}
}

// Execute records a progress event {current, total, completed} and answers
// {"progress": {current, total, completed, label?}}. current > total is an
// error result and records nothing; a failed event is an infrastructure fault.
func (setProgress) Execute(_ context.Context, call Call) (Result, error) {
	var args struct {
		Current   int64  `json:"current"`
		Total     int64  `json:"total"`
		Completed bool   `json:"completed"`
		Label     string `json:"label"`
	}
	if err := decodeArgs(call.Args, &args); err != nil {
		return ErrorResult(err.Error()), nil
	}
	if args.Current > args.Total {
		return ErrorResult(MsgProgressExceeds), nil
	}
	p := Progress{Current: args.Current, Total: args.Total, Completed: args.Completed}
	if err := call.emit(EventProgress, p); err != nil {
		return Result{}, fmt.Errorf("progress event: %w", err)
	}
	return Result{Content: map[string]any{"progress": progressView{Progress: p, Label: args.Label}}}, nil
}
