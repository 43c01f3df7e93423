package agent

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"

	"waymark/internal/access"
	"waymark/internal/llm"
	"waymark/internal/llmconfig"
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
func (rt *Decider) SubmitInput(ctx context.Context, actor int64, id string, in Input) (Result, error) {
	if in.TurnDigest == "" {
		return Result{}, invalidf("turnDigest: required")
	}
	c, err := rt.checkInput(ctx, actor, id, in)
	if err != nil {
		return Result{}, err
	}
	r, a, cfg, s := c.run, c.actor, c.cfg, c.suspended
	st := s.State
	if err := rt.recheckSkills(ctx, r, &st); err != nil {
		return Result{}, err
	}
	ctx, release := rt.detach(ctx) // the answered turn is settled even when the caller goes away
	defer release()
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

// inputChecks is what the checks of an input read.
type inputChecks struct {
	run       run.Run
	actor     *access.Actor
	cfg       llmconfig.Configuration
	suspended suspended
}

// checkInput runs the checks of SubmitInput that only read, in order: the
// run is actor's own (or actor administers) and waits for input, actor is
// not a service account, in names the waiting turn and its values match the
// question's schema. SubmitInput runs them again on the worker, after
// SubmitInputOnWorker ran them in the request; in has a turn digest.
func (rt *Decider) checkInput(ctx context.Context, actor int64, id string, in Input) (inputChecks, error) {
	r, a, err := rt.ownRun(ctx, actor, id)
	if err != nil {
		return inputChecks{}, err
	}
	if a.ServiceAccount {
		return inputChecks{}, ErrNotPermitted
	}
	if r.Status != run.StatusWaitingForInput {
		return inputChecks{}, ErrNotWaiting
	}
	s, err := decodeSuspended(r.Suspended)
	if err != nil {
		return inputChecks{}, err
	}
	if s.Input == nil {
		return inputChecks{}, ErrCorruptState
	}
	if subtle.ConstantTimeCompare([]byte(in.TurnDigest), []byte(s.Digest)) != 1 {
		return inputChecks{}, ErrStaleTurn
	}
	if err := tool.ValidateInput(s.Input.Schema, in.Values); err != nil {
		return inputChecks{}, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	cfg, err := rt.configs.Get(ctx, r.Configuration)
	if err != nil {
		return inputChecks{}, err
	}
	return inputChecks{run: r, actor: a, cfg: cfg, suspended: s}, nil
}
