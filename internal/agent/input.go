package agent

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"

	"waymark/internal/llm"
	"waymark/internal/run"
	"waymark/internal/tool"
)

// Input answers a waiting question.
type Input struct {
	TurnDigest string          `json:"turnDigest"`
	Values     json.RawMessage `json:"values"`
}

// SubmitInput answers the question run id waits for, as actor (the initiator
// or an administrator). Once its checks passed, the resumed turn runs detached
// from ctx's cancellation, as Approve does.
func (rt *Runtime) SubmitInput(ctx context.Context, actor int64, id string, in Input) (Result, error) {
	if in.TurnDigest == "" {
		return Result{}, invalidf("turnDigest: required")
	}
	r, a, err := rt.ownRun(ctx, actor, id)
	if err != nil {
		return Result{}, err
	}
	if a.ServiceAccount {
		return Result{}, ErrNotPermitted
	}
	if r.Status != run.StatusWaitingForInput {
		return Result{}, ErrNotWaiting
	}
	s, err := decodeSuspended(r.Suspended)
	if err != nil {
		return Result{}, err
	}
	if s.Input == nil {
		return Result{}, ErrCorruptState
	}
	if subtle.ConstantTimeCompare([]byte(in.TurnDigest), []byte(s.Digest)) != 1 {
		return Result{}, ErrStaleTurn
	}
	if err := tool.ValidateInput(s.Input.Schema, in.Values); err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	cfg, err := rt.configs.Get(ctx, r.Configuration)
	if err != nil {
		return Result{}, err
	}
	st := s.State
	if err := rt.recheckSkills(ctx, r, &st); err != nil {
		return Result{}, err
	}
	ctx = context.WithoutCancel(ctx) // the answered turn is settled even when the caller goes away
	seg := rt.newSegment(r, rt.owner("resume"), cfg, len(r.Request) > 0)
	seg.resumed = true
	seg.emit(run.EventInput, map[string]any{"submittedBy": actor, "turnDigest": s.Digest, "values": in.Values})
	seg.emit(run.EventStatus, map[string]any{"status": run.StatusRunning})
	if err := rt.claim(ctx, seg, run.StatusWaitingForInput, nil); err != nil {
		return Result{}, err
	}
	var values any
	_ = json.Unmarshal(in.Values, &values)
	rt.answer(seg, &st, llm.ToolCall{ID: s.Input.CallID, Name: s.Input.Tool}, tool.Result{Content: map[string]any{"answer": values}})
	return rt.withStatus(ctx, a, ownerViewer, rt.drive(ctx, seg, &st)), nil
}
