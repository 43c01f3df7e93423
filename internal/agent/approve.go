package agent

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"

	"waymark/internal/access"
	"waymark/internal/llm"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// DenyReason is why a proposal was declined; the model receives it as a fixed token.
type DenyReason string

// The denial reasons of the card answers.
const (
	DenyVariant DenyReason = "variant" // propose another wording
	DenySkip    DenyReason = "skip"    // not now: move on
	DenyKeep    DenyReason = "keep"    // the current content stays: move on
)

// Decision answers a waiting approval.
type Decision struct {
	Approve    bool       `json:"approve"`
	TurnDigest string     `json:"turnDigest"`
	Reason     DenyReason `json:"reason,omitempty"`
}

func (d Decision) validate() error {
	switch d.Reason {
	case "", DenyVariant, DenySkip, DenyKeep:
	default:
		return invalidf("reason: want variant, skip or keep, got %q", d.Reason)
	}
	if d.Approve && d.Reason != "" {
		return invalidf("reason: only a denial carries a reason")
	}
	if d.TurnDigest == "" {
		return invalidf("turnDigest: required")
	}
	return nil
}

// Approve answers the waiting turn of run id as actor. It refuses, leaving
// the run waiting, when the digest names another turn, when a preview changed
// since it was shown (the new preview is stored), and when a four-eyes
// configuration would be released by its initiator. An approval executes the
// turn as the run's initiator; a denial feeds the model the denial token.
// Once its checks passed, the resumed turn runs detached from ctx's
// cancellation: a caller that goes away does not leave the run running.
func (rt *Runtime) Approve(ctx context.Context, actor int64, id string, d Decision) (Result, error) {
	if err := d.validate(); err != nil {
		return Result{}, err
	}
	// The checks up to the claim read one snapshot; the scope ends before
	// the first write.
	rctx, endReads := rt.db.ReadScope(ctx)
	defer endReads()
	r, a, v, err := rt.visibleRun(rctx, actor, id)
	if err != nil {
		return Result{}, err
	}
	if r.Status != run.StatusWaitingForApproval {
		return Result{}, ErrNotWaiting
	}
	cfg, err := rt.configs.Get(rctx, r.Configuration)
	if err != nil {
		return Result{}, fmt.Errorf("configuration of run %s: %w", id, err)
	}
	if d.Approve {
		if a.ServiceAccount {
			return Result{}, ErrNotPermitted
		}
		if cfg.RequireSecondApprover {
			if actor == r.Initiator {
				return Result{}, ErrSelfApproval
			}
			if !a.HasGrant(access.GrantApprove) {
				return Result{}, ErrNotPermitted
			}
		}
	}
	s, err := decodeSuspended(r.Suspended)
	if err != nil {
		return Result{}, err
	}
	if subtle.ConstantTimeCompare([]byte(d.TurnDigest), []byte(s.Digest)) != 1 {
		return Result{}, ErrStaleTurn
	}
	if !d.Approve && !offersReasons(s) {
		d.Reason = "" // a reason the card does not offer is a plain denial (P.R5)
	}
	owner := rt.owner("resume")
	seg := rt.newSegment(r, owner, cfg, len(r.Request) > 0)
	seg.resumed = true
	st := s.State
	if err := rt.recheckSkills(rctx, r, &st); err != nil {
		return Result{}, err
	}
	// Once checked, the decision is carried out and the resumed turn settled
	// even when the caller goes away, as Run does.
	ctx = context.WithoutCancel(ctx)
	if d.Approve {
		fresh := rt.currentCalls(rctx, seg, &st, s)
		if previewsDiffer(s.Calls, fresh) {
			endReads()
			return Result{}, rt.resuspend(ctx, seg, s, fresh)
		}
	}
	endReads()
	decidedBy := "other_user"
	if actor == r.Initiator {
		decidedBy = "run_owner"
	}
	before := len(seg.events)
	seg.emit(run.EventApproval, map[string]any{"approved": d.Approve, "decidedBy": actor, "decider": decidedBy,
		"reason": string(d.Reason), "turnDigest": s.Digest})
	seg.emit(run.EventStatus, map[string]any{"status": run.StatusRunning})
	var fence []byte
	if d.Approve {
		fence = fenceFor(s.Calls)
	}
	calls := s.Calls
	written := false // the first call ran with the claim
	if fence != nil && calls[0].Effect == tool.EffectWrite {
		written, err = rt.claimAndWrite(ctx, seg, &st, calls[0], s.Lang)
		if errors.Is(err, tool.ErrPreviewChanged) {
			// The record changed after the check above: nothing was written
			// or claimed; the card shows the record as it is now.
			seg.events = seg.events[:before]
			return Result{}, rt.resuspend(ctx, seg, s, rt.currentCalls(ctx, seg, &st, s))
		}
		if err != nil {
			return Result{}, err
		}
	}
	if written {
		calls, fence = calls[1:], nil
	} else if err := rt.claim(ctx, seg, run.StatusWaitingForApproval, fence); err != nil {
		return Result{}, err
	}
	if !d.Approve {
		for _, c := range calls {
			rt.answer(seg, &st, llm.ToolCall{ID: c.ID, Name: c.Tool, Arguments: string(c.Args)}, denial(decidedBy, d.Reason))
		}
		done := decided(seg, s.Calls)
		res := rt.drive(ctx, seg, &st)
		res.Calls = done
		return rt.withStatus(ctx, a, v, res), nil
	}
	wrote := fieldsWritten{}
	if written {
		wrote.add(s.Calls[0].Target)
	}
	for i, c := range calls {
		released := releasedOf(c, s.Lang)
		if wrote.overlaps(c.Target) {
			released = nil // this turn's own earlier write changed what the card showed
		}
		if err := rt.execute(ctx, seg, &st, c, i == 0 && fence != nil, released); err != nil {
			res := rt.fault(ctx, seg, err, Result{UUID: id})
			res.Calls = decided(seg, s.Calls)
			return rt.withStatus(ctx, a, v, res), nil
		}
		wrote.add(c.Target)
	}
	done := decided(seg, s.Calls)
	res := rt.drive(ctx, seg, &st)
	res.Calls = done
	return rt.withStatus(ctx, a, v, res), nil
}

// decided is how the runtime answered the calls of the decided turn, in
// the card's order.
func decided(seg *segment, calls []pendingCall) []CallResult {
	out := []CallResult{}
	for _, c := range calls {
		if r, ok := seg.answered[c.ID]; ok {
			out = append(out, r)
		}
	}
	return out
}

// withStatus adds the run's status as the decider sees it now.
func (rt *Runtime) withStatus(ctx context.Context, a *access.Actor, v viewer, res Result) Result {
	ctx, end := rt.db.ReadScope(ctx)
	defer end()
	if r, err := rt.runs.Get(ctx, res.UUID); err == nil {
		st := rt.view(ctx, a, r, v)
		if res.Answer != "" && v == ownerViewer {
			st.Answer = res.Answer
		}
		res.Status = &st
	}
	return res
}

// previewChangedResult is the error result of an approved write whose
// record changed after the approval: nothing was written.
const previewChangedResult = "preview_changed: the record changed after the approval; nothing was written"

// denial is the tool result a declined call gets: a fixed token the model can rely on.
func denial(decidedBy string, reason DenyReason) tool.Result {
	c := map[string]string{"error": "approval_denied", "decided_by": decidedBy}
	if reason != "" {
		c["reason"] = string(reason)
	}
	return tool.Result{Content: c, IsError: true}
}

// claim takes the waiting run for seg (waiting → running), with the buffered
// events and, for an approval whose first call writes, the write fence.
func (rt *Runtime) claim(ctx context.Context, seg *segment, from run.Status, fence []byte) error {
	err := rt.db.InTx(ctx, func(tx *store.Tx) error {
		won, err := rt.runs.ResumeTx(ctx, tx, seg.run.UUID, run.Resumption{From: from, Owner: seg.owner, Lease: rt.cfg.Lease, Fence: fence}, seg.flush())
		if err != nil {
			return err
		}
		if !won {
			return ErrNotWaiting
		}
		return nil
	})
	if err == nil {
		seg.flushed()
	}
	return err
}

// claimAndWrite claims the waiting run and executes its first call, a
// content write (effect write), in one transaction: the write runs first
// and the guarded claim last, committing the write, the decision and the
// call's events together, and a lost claim rolls the write back. No fence is
// needed: nothing can observe half of one transaction. The write compares
// the call's preview, shown in lang, with the record as the transaction
// reads it, and refuses with tool.ErrPreviewChanged when the record changed
// since the approver's check. It reports false, with the run and the segment
// as they were, when it does not apply (the run's process ended) or the
// write failed: the caller then takes the long way (claim, then execute),
// which records the end or the failure.
func (rt *Runtime) claimAndWrite(ctx context.Context, seg *segment, st *state, c pendingCall, lang string) (bool, error) {
	if held, _ := rt.processHeld(ctx, st); !held {
		return false, nil
	}
	lc := llm.ToolCall{ID: c.ID, Name: c.Tool, Arguments: string(c.Args)}
	messages, events := len(st.Messages), len(seg.events)
	err := rt.writeInTx(ctx, seg, st, lc, releasedOf(c, lang), ErrNotWaiting, func(tx *store.Tx) (bool, error) {
		return rt.runs.ResumeTx(ctx, tx, seg.run.UUID, run.Resumption{From: run.StatusWaitingForApproval, Owner: seg.owner, Lease: rt.cfg.Lease}, seg.flush())
	})
	if err != nil {
		st.Messages, seg.events = st.Messages[:messages], seg.events[:events]
		if errors.Is(err, ErrNotWaiting) || errors.Is(err, tool.ErrPreviewChanged) {
			return false, err
		}
		return false, nil
	}
	return true, nil
}

// releasedOf is what the approver released of call c, shown in lang: its
// preview, which the write checks in its transaction (nil: none shown).
func releasedOf(c pendingCall, lang string) *tool.Released {
	if c.Preview == nil {
		return nil
	}
	return &tool.Released{Preview: *c.Preview, Lang: lang}
}

// fieldsWritten is the fields an approved turn has written so far: a later
// call of the turn on one of them was shown the value before that write, so
// its preview cannot bind it.
type fieldsWritten map[fieldRef]bool

type fieldRef struct {
	table string
	uid   int64
	field string
}

func (w fieldsWritten) add(t *tool.Target) {
	if t == nil {
		return
	}
	for _, f := range t.Fields {
		w[fieldRef{t.Table, t.UID, f}] = true
	}
}

func (w fieldsWritten) overlaps(t *tool.Target) bool {
	if t == nil {
		return false
	}
	for _, f := range t.Fields {
		if w[fieldRef{t.Table, t.UID, f}] {
			return true
		}
	}
	return false
}

// testHookBeforeWrite, set by tests only, runs between an approval's checks
// and each approved write's transaction: where a concurrent change lands.
var testHookBeforeWrite func()

// writeInTx runs an approved content write (effect write) in one
// transaction with the guarded transition that records it: the write first,
// guard last (it commits the segment's events, the write's among them), so
// a lost guard — reported as lost — rolls the write back with it. With
// released set, a record whose preview is no longer the released one rolls
// back with tool.ErrPreviewChanged.
func (rt *Runtime) writeInTx(ctx context.Context, seg *segment, st *state, lc llm.ToolCall, released *tool.Released, lost error, guard func(tx *store.Tx) (bool, error)) error {
	call := rt.toolCall(seg, st, lc)
	call.Released = released
	if testHookBeforeWrite != nil {
		testHookBeforeWrite()
	}
	err := rt.db.InTx(ctx, func(tx *store.Tx) error {
		call.Tx = tx
		res, err := rt.tools.Execute(ctx, lc.Name, call)
		if err != nil {
			return err
		}
		rt.answer(seg, st, lc, res)
		won, err := guard(tx)
		if err != nil {
			return err
		}
		if !won {
			return lost
		}
		return nil
	})
	if err == nil {
		seg.flushed()
	} else {
		delete(seg.answered, lc.ID) // rolled back: the call wrote nothing
	}
	return err
}

// fenceFor is the fence of the first call when it writes.
func fenceFor(calls []pendingCall) []byte {
	if len(calls) == 0 || !calls[0].DeclaresWrite {
		return nil
	}
	return effectJSON(calls[0])
}

func effectJSON(c pendingCall) []byte {
	b, _ := json.Marshal(map[string]any{"callId": c.ID, "tool": c.Tool, "effect": c.Effect})
	return b
}

// execute runs one approved call under the write fence. A write of the
// content store (effect write) runs inside the transaction that records its
// events and releases the fence, so the write and its audit commit together;
// any other effect runs outside a transaction and is recorded right after —
// even when the segment lost the run meanwhile, so a tool that ran keeps its
// audit record. A crash in between leaves the fence set for the reaper.
//
// A content write whose record no longer shows the preview released writes
// nothing: the run is past its claim, so the model gets the fixed error
// result previewChangedResult and the turn goes on.
func (rt *Runtime) execute(ctx context.Context, seg *segment, st *state, c pendingCall, fenced bool, released *tool.Released) error {
	lc := llm.ToolCall{ID: c.ID, Name: c.Tool, Arguments: string(c.Args)}
	if rt.processEnded(ctx, seg, st) {
		return errLost // settled process_ended; the segment stops
	}
	if !c.DeclaresWrite {
		return rt.runRead(ctx, seg, st, lc)
	}
	if !fenced {
		if err := seg.renew(ctx, effectJSON(c)); err != nil {
			return err
		}
	}
	if c.Effect == tool.EffectWrite {
		// The guarded renewal clears the fence in the write's transaction.
		err := rt.writeInTx(ctx, seg, st, lc, released, errLost, func(tx *store.Tx) (bool, error) {
			return rt.runs.RenewTx(ctx, tx, seg.run.UUID, seg.owner, rt.cfg.Lease, run.NoFence, seg.flush())
		})
		if errors.Is(err, tool.ErrPreviewChanged) {
			rt.answer(seg, st, lc, tool.ErrorResult(previewChangedResult))
			return seg.renew(ctx, run.NoFence)
		}
		return err
	}
	call := rt.toolCall(seg, st, lc)
	var res tool.Result
	err := seg.heartbeat(ctx, func(ctx context.Context) error {
		var err error
		res, err = rt.tools.Execute(ctx, c.Tool, call)
		return err
	})
	if err != nil {
		return err
	}
	rt.answer(seg, st, lc, res)
	lost := false
	err = rt.db.InTx(ctx, func(tx *store.Tx) error {
		won, err := rt.runs.ClearFenceTx(ctx, tx, seg.run.UUID, seg.owner)
		if err != nil {
			return err
		}
		lost = !won
		if err := rt.runs.AppendEventsTx(ctx, tx, seg.run.UUID, seg.events, seg.privacy); err != nil {
			return err
		}
		if !lost && seg.usage != (run.Usage{}) {
			_, err = rt.runs.AddUsageTx(ctx, tx, seg.run.UUID, seg.owner, seg.usage)
		}
		return err
	})
	if err != nil {
		return err
	}
	seg.flushed()
	if lost {
		return errLost
	}
	return nil
}

func toolCalls(calls []pendingCall) []llm.ToolCall {
	out := make([]llm.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = llm.ToolCall{ID: c.ID, Name: c.Tool, Arguments: string(c.Args)}
	}
	return out
}

// currentCalls is the waiting turn's calls with their previews as the
// records read now (in one snapshot).
func (rt *Runtime) currentCalls(ctx context.Context, seg *segment, st *state, s suspended) []pendingCall {
	rctx, end := rt.db.ReadScope(ctx)
	defer end()
	return rt.pendingCalls(rctx, seg, st, toolCalls(s.Calls), s.Lang)
}

// previewsDiffer compares what the approver saw with the previews now. A
// call that had no preview does not bind; one whose preview fails now refuses
// — except a write the acting user lost the right to since: it is released
// and the write refuses itself, so the model and the outcome say so.
func previewsDiffer(shown, now []pendingCall) bool {
	for i := range shown {
		if shown[i].Preview == nil || now[i].denied {
			continue
		}
		if now[i].Preview == nil || !tool.SameItems(*shown[i].Preview, *now[i].Preview) {
			return true
		}
	}
	return false
}

// resuspend stores the current previews on a waiting run (the turn digest stays:
// it names the calls) and answers ErrPreviewChanged.
func (rt *Runtime) resuspend(ctx context.Context, seg *segment, s suspended, fresh []pendingCall) error {
	s.Calls = fresh
	body, err := json.Marshal(s)
	if err != nil {
		return err
	}
	seg.emit(run.EventApproval, map[string]any{"previewChanged": true, "turnDigest": s.Digest})
	if err := rt.claim(ctx, seg, run.StatusWaitingForApproval, nil); err != nil {
		return err
	}
	if err := seg.suspend(ctx, run.StatusWaitingForApproval, body); err != nil {
		return err
	}
	return ErrPreviewChanged
}

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
