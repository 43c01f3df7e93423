package agent

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"waymark/internal/access"
	"waymark/internal/fault"
	"waymark/internal/llm"
	"waymark/internal/llmconfig"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// Approve answers the waiting turn of run id as actor. It refuses, leaving
// the run waiting, when the digest names another turn, when a preview changed
// since it was shown (the new preview is stored), and when a four-eyes
// configuration would be released by its initiator. An approval executes the
// turn as the run's initiator; a denial feeds the model the denial token.
// Once its checks passed, the resumed turn runs detached from ctx's
// cancellation: a caller that goes away does not leave the run running.
func (rt *Decider) Approve(ctx context.Context, actor int64, id string, d Decision) (Result, error) {
	if err := d.validate(); err != nil {
		return Result{}, err
	}
	// The checks up to the claim read one snapshot; the scope ends before
	// the first write.
	rctx, endReads := rt.db.ReadScope(ctx)
	defer endReads()
	c, err := rt.checkApproval(rctx, actor, id, d)
	if err != nil {
		return Result{}, err
	}
	r, a, v, cfg, s := c.run, c.actor, c.viewer, c.cfg, c.suspended
	if fourEyesTurnedOn(cfg, s) {
		endReads()
		return Result{}, rt.denyFourEyes(context.WithoutCancel(ctx), r)
	}
	if !d.Approve && !offersReasons(s) {
		d.Reason, d.Instruction = "", "" // a reason the card does not offer is a plain denial (P.R5)
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
	ctx, release := rt.detach(ctx)
	defer release()
	if d.Approve {
		fresh := rt.currentCalls(rctx, seg, &st, s)
		if previewsDiffer(s.Calls, fresh) {
			endReads()
			return Result{}, rt.resuspend(ctx, seg, s, fresh)
		}
		// A call whose tool the resumed turn no longer offers — a process
		// approval that cannot be read takes its declared tools away (LC5) —
		// is answered "unknown tool" with this release, as it is now: it never
		// runs, and the turn goes on without it.
		s.Calls = slices.Clone(s.Calls)
		for i := range fresh {
			if fresh[i].unoffered {
				s.Calls[i] = fresh[i]
			}
		}
	}
	endReads()
	decidedBy := "other_user"
	if actor == r.Initiator {
		decidedBy = "run_owner"
	}
	before := len(seg.events)
	approval := map[string]any{"approved": d.Approve, "decidedBy": actor, "decider": decidedBy,
		"reason": string(d.Reason), "turnDigest": s.Digest}
	if d.Instruction != "" {
		// Content: kept at privacy full only, where a continuation after a
		// lost worker hands it to the model as this one does.
		approval["instruction"] = d.Instruction
	}
	seg.emit(run.EventApproval, approval)
	seg.emit(run.EventStatus, map[string]any{"status": run.StatusRunning})
	var fence []byte
	if d.Approve {
		fence = fenceFor(s.Calls)
	}
	calls := s.Calls
	written := false // the first call ran with the claim
	driveCtx := ctx
	if fence != nil && calls[0].Effect == tool.EffectWrite {
		// The write's transaction reads the settings generation under the
		// write lock (rights and tool state re-checked); a write that cannot
		// move it hands it to the scope, and the next round offers its tools
		// at it when nothing else runs in between (drive leaves the scope
		// before the model call).
		sctx, endScope := rt.db.SettingsScope(ctx)
		defer endScope()
		if len(calls) == 1 {
			driveCtx = sctx
		}
		written, err = rt.claimAndWrite(sctx, seg, &st, calls[0], s.Lang)
		if errors.Is(err, tool.ErrPreviewChanged) {
			// The record changed after the check above: nothing was written
			// or claimed; the card shows the record as it is now.
			seg.events = seg.events[:before]
			rerr := rt.resuspend(ctx, seg, s, rt.currentCalls(ctx, seg, &st, s))
			var changed *tool.ChangedError
			if errors.As(err, &changed) && errors.Is(rerr, ErrPreviewChanged) {
				c := changed.Conflict
				return Result{}, ErrPreviewChanged.With("%s: the field %s of %s:%d was changed in %s since the card was shown; "+
					"nothing was written, the card shows the current value", ErrPreviewChanged.Message(), c.Field, c.Table, c.UID, c.Source)
			}
			return Result{}, rerr
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
			rt.answer(seg, &st, llm.ToolCall{ID: c.ID, Name: c.Tool, Arguments: string(c.Args)}, denial(decidedBy, d.Reason, d.Instruction))
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
		if err := rt.execute(ctx, seg, &st, approvedCall{pendingCall: c, fenced: i == 0 && fence != nil, released: released}); err != nil {
			res := rt.fault(ctx, seg, err, Result{UUID: id})
			res.Calls = decided(seg, s.Calls)
			return rt.withStatus(ctx, a, v, res), nil
		}
		wrote.add(c.Target)
	}
	if !written {
		driveCtx = ctx
	}
	done := decided(seg, s.Calls)
	res := rt.drive(driveCtx, seg, &st)
	res.Calls = done
	return rt.withStatus(ctx, a, v, res), nil
}

// ErrApprovalDenied: the waiting turn holds a process and its configuration
// turned four-eyes on since; the run was settled failed approval_denied.
var ErrApprovalDenied = fault.New(fault.Conflict, "approval_denied",
	"the configuration requires a second approver now; the process run was ended")

// fourEyesTurnedOn reports a waiting process turn whose configuration
// requires a second approver: a process never starts or continues on such a
// configuration (ADR-228 item 2, check f), so it turned four-eyes on since.
func fourEyesTurnedOn(cfg llmconfig.Configuration, s suspended) bool {
	return cfg.RequireSecondApprover && s.State.Process != nil
}

// denyFourEyes settles the waiting process turn r failed approval_denied, as
// the start checks settle a continuation on such a configuration (ADR-228
// item 2: "as on resume"), under the guarded waiting-only transition, and
// answers ErrApprovalDenied. A run that left waiting meanwhile is not
// touched: the decision lost (ErrNotWaiting).
func (rt *Decider) denyFourEyes(ctx context.Context, r run.Run) error {
	won := false
	err := rt.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		won, err = rt.runs.SettleTx(ctx, tx, r.UUID, run.Settlement{Status: run.StatusFailed, Reason: run.ReasonApprovalDenied,
			ErrClass: "process_invocation_refused", ErrMsg: "the configuration requires a second approver since the process started"},
			run.Flush{Events: []run.NewEvent{
				{Kind: run.EventNotice, Payload: map[string]any{"kind": "refusal", "refusal": "second_approver_required"}},
				{Kind: run.EventStatus, Payload: map[string]any{"status": run.StatusFailed, "reason": run.ReasonApprovalDenied,
					"errorClass": "process_invocation_refused"}},
			}, Privacy: run.PrivacyMetadata})
		return err
	})
	if err != nil {
		return err
	}
	if !won {
		return ErrNotWaiting
	}
	if rt.cfg.ObserveRefusal != nil {
		rt.cfg.ObserveRefusal("second_approver_required")
	}
	return ErrApprovalDenied
}

// approvalChecks is what the checks of an approval read.
type approvalChecks struct {
	run       run.Run
	actor     *access.Actor
	viewer    viewer
	cfg       llmconfig.Configuration
	suspended suspended
}

// checkApproval runs the checks of Approve that only read, in order, on
// ctx (a read scope): the run is visible to actor and waits for approval,
// the actor may release it (four eyes: not its initiator, with the approve
// grant; never a service account), and d names the waiting turn. Approve
// runs them again on the worker, after ApproveOnWorker ran them in the
// request; d was validated.
func (rt *Decider) checkApproval(ctx context.Context, actor int64, id string, d Decision) (approvalChecks, error) {
	r, a, v, err := rt.visibleRun(ctx, actor, id)
	if err != nil {
		return approvalChecks{}, err
	}
	if r.Status != run.StatusWaitingForApproval {
		return approvalChecks{}, ErrNotWaiting
	}
	cfg, err := rt.configs.Get(ctx, r.Configuration)
	if err != nil {
		return approvalChecks{}, fmt.Errorf("configuration of run %s: %w", id, err)
	}
	s, err := decodeSuspended(r.Suspended)
	if err != nil {
		return approvalChecks{}, err
	}
	if d.Approve {
		if a.ServiceAccount {
			return approvalChecks{}, ErrNotPermitted
		}
		// A process turn on a configuration that turned four-eyes on is
		// not released by anyone: Approve settles it (fourEyesTurnedOn).
		if cfg.RequireSecondApprover && !fourEyesTurnedOn(cfg, s) {
			if actor == r.Initiator {
				return approvalChecks{}, ErrSelfApproval
			}
			if !a.HasGrant(access.GrantApprove) {
				return approvalChecks{}, ErrNotPermitted
			}
		}
	}
	if subtle.ConstantTimeCompare([]byte(d.TurnDigest), []byte(s.Digest)) != 1 {
		return approvalChecks{}, ErrStaleTurn
	}
	return approvalChecks{run: r, actor: a, viewer: v, cfg: cfg, suspended: s}, nil
}

// claim takes the waiting run for seg (waiting → running), with the buffered
// events and, for an approval whose first call writes, the write fence.
func (rt *Decider) claim(ctx context.Context, seg *segment, from run.Status, fence []byte) error {
	return seg.commit(ctx, rt.db.InTx, ErrNotWaiting, func(tx *store.Tx) (bool, error) {
		return rt.runs.ResumeTx(ctx, tx, seg.run.UUID, run.Resumption{From: from, Owner: seg.owner, Lease: rt.cfg.Lease, Fence: fence}, seg.flush())
	})
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
func (rt *Decider) claimAndWrite(ctx context.Context, seg *segment, st *state, c pendingCall, lang string) (bool, error) {
	if held, _, _ := rt.processHeld(ctx, st); !held {
		return false, nil
	}
	lc := llm.ToolCall{ID: c.ID, Name: c.Tool, Arguments: string(c.Args)}
	messages, events := len(st.Messages), len(seg.events)
	err := rt.writeInTx(ctx, seg, st, approvedWrite{call: lc, released: releasedOf(c, lang), lost: ErrNotWaiting, guard: func(tx *store.Tx) (bool, error) {
		return rt.runs.ResumeTx(ctx, tx, seg.run.UUID, run.Resumption{From: run.StatusWaitingForApproval, Owner: seg.owner, Lease: rt.cfg.Lease}, seg.flush())
	}})
	if err != nil {
		st.Messages, seg.events = st.Messages[:messages], seg.events[:events]
		if errors.Is(err, ErrNotWaiting) || errors.Is(err, tool.ErrPreviewChanged) {
			return false, err
		}
		return false, nil
	}
	return true, nil
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
func (rt *Decider) currentCalls(ctx context.Context, seg *segment, st *state, s suspended) []pendingCall {
	rctx, end := rt.db.ReadScope(ctx)
	defer end()
	return rt.pendingCalls(rctx, seg, st, toolCalls(s.Calls), s.Lang)
}

// previewsDiffer compares what the approver saw with the previews now. A
// call that had no preview does not bind; one whose preview fails now refuses
// — except a write the acting user lost the right to since: it is released
// and the write refuses itself, so the model and the outcome say so; and a
// call whose tool the turn no longer offers: it is released and answered
// "unknown tool" (LC5).
func previewsDiffer(shown, now []pendingCall) bool {
	for i := range shown {
		if shown[i].Preview == nil || now[i].denied || now[i].unoffered {
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
func (rt *Decider) resuspend(ctx context.Context, seg *segment, s suspended, fresh []pendingCall) error {
	s.Calls = fresh
	body, err := json.Marshal(s)
	if err != nil {
		return err
	}
	seg.emit(run.EventApproval, map[string]any{"previewChanged": true, "turnDigest": s.Digest})
	if err := rt.claim(ctx, seg, run.StatusWaitingForApproval, nil); err != nil {
		return err
	}
	if err := seg.suspend(ctx, run.StatusWaitingForApproval, body, 0); err != nil {
		return err
	}
	return ErrPreviewChanged
}
