package agent

import (
	"context"
	"encoding/json"
	"errors"

	"waymark/internal/llm"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// previewChangedResult is the error result of an approved write whose
// record changed after the approval: nothing was written.
const previewChangedResult = "preview_changed: the record changed after the approval; nothing was written"

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

// approvedWrite is an approved content write (effect write) and the guarded
// transition that records it (arguments by name).
type approvedWrite struct {
	call llm.ToolCall
	// released is what the approver released, checked in the write's
	// transaction; nil: nothing was shown.
	released *tool.Released
	lost     error // what a lost guard returns
	guard    func(tx *store.Tx) (bool, error)
}

// writeInTx runs an approved content write in one transaction with the
// guarded transition that records it: the write first, guard last (it
// commits the segment's events, the write's among them), so a lost guard —
// reported as w.lost — rolls the write back with it. With w.released set, a
// record whose preview is no longer the released one rolls back with
// tool.ErrPreviewChanged.
func (rt *Decider) writeInTx(ctx context.Context, seg *segment, st *state, w approvedWrite) error {
	call := rt.toolCall(seg, st, w.call)
	call.Released = w.released
	if rt.cfg.Test.BeforeWrite != nil {
		rt.cfg.Test.BeforeWrite()
	}
	err := seg.commit(ctx, rt.db.InTx, w.lost, func(tx *store.Tx) (bool, error) {
		call.Tx = tx
		res, err := rt.tools.Execute(ctx, w.call.Name, call)
		if err != nil {
			return false, err
		}
		rt.answer(seg, st, w.call, res)
		return w.guard(tx)
	})
	if err != nil {
		delete(seg.answered, w.call.ID) // rolled back: the call wrote nothing
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

// approvedCall is a call of an approved turn as execute runs it.
type approvedCall struct {
	pendingCall
	fenced   bool           // the claim set its write fence already
	released *tool.Released // what the approver released of it (releasedOf); nil: nothing binds
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
func (rt *Decider) execute(ctx context.Context, seg *segment, st *state, c approvedCall) error {
	lc := llm.ToolCall{ID: c.ID, Name: c.Tool, Arguments: string(c.Args)}
	if rt.processEnded(ctx, seg, st) {
		return errLost // settled process_ended; the segment stops
	}
	if !c.DeclaresWrite {
		return rt.runRead(ctx, seg, st, lc)
	}
	if !c.fenced {
		if err := seg.renew(ctx, effectJSON(c.pendingCall)); err != nil {
			return err
		}
	}
	if c.Effect == tool.EffectWrite {
		// The guarded renewal clears the fence in the write's transaction.
		err := rt.writeInTx(ctx, seg, st, approvedWrite{call: lc, released: c.released, lost: errLost, guard: func(tx *store.Tx) (bool, error) {
			return rt.runs.RenewTx(ctx, tx, seg.run.UUID, run.Renewal{Owner: seg.owner, Lease: rt.cfg.Lease, Fence: run.NoFence}, seg.flush())
		}})
		if errors.Is(err, tool.ErrPreviewChanged) {
			msg := previewChangedResult
			var changed *tool.ChangedError
			if errors.As(err, &changed) {
				msg = "preview_changed: " + changed.Error() + "; it holds now: " + changed.Conflict.Current
			}
			rt.answer(seg, st, lc, tool.ErrorResult(msg))
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
