package agent

import (
	"context"
	"encoding/json"

	"waymark/internal/llm"
	"waymark/internal/run"
	"waymark/internal/tool"
)

// Continuing a decided turn whose worker died. A resumed turn (Approve or
// SubmitInput, on a chat worker or a resume job) keeps the suspended state
// it answered until the run suspends again or ends, and records the
// decision with its claim. When its worker dies outside a write, the reaper
// requeues the run (deadLetter) and a worker continues it from what is
// stored — the suspended state, the decision and the events of the calls
// that ran — instead of dead-lettering it: the approved calls not yet run
// are run once (a content write commits with its tool event, so a call
// without one wrote nothing; a fence on any other write dead-letters the run
// first), those that ran are answered as recorded, and the model loop goes
// on. A run without a recorded decision (it died between a claim and its
// re-suspension) waits again for the decision it waited for.

// continuedNote is what the model is told of a call that ran before the
// interruption when the run's privacy level kept no result.
const continuedNote = `{"note":"this call ran before an interruption; its result is not stored"}`

// recordedDecision is a decision of the waiting turn as its event stores it.
type recordedDecision struct {
	seq         int64
	input       bool
	approved    bool
	reason      DenyReason
	instruction string // a variant's, when stored (privacy full)
	decider     string
	values      json.RawMessage // an input's values, when stored (privacy full)
	hasValues   bool
}

// recordedCall is a call answered after the decision, as its tool event stores it.
type recordedCall struct {
	isError bool
	result  json.RawMessage // nil when the privacy level kept none
}

// continueDecided continues seg's run (claimed from the queue, its
// suspended state stored) after the decision its previous worker took.
func (rt *Decider) continueDecided(ctx context.Context, seg *segment) (Result, error) {
	res := Result{UUID: seg.run.UUID}
	seg.resumed = true
	s, err := decodeSuspended(seg.run.Suspended)
	if err != nil {
		seg.fail(ctx, run.ReasonNotRetryable, "corrupt_state", "the suspended state cannot be read")
		return res, nil
	}
	evs, err := rt.runs.EventsOfKinds(ctx, seg.run.UUID, run.EventApproval, run.EventInput, run.EventTool)
	if err != nil {
		return res, err // the lease lapses and the reaper requeues it again
	}
	d, ok := decisionOf(evs, s.Digest, seg.run.Initiator)
	waitAgain := func() (Result, error) {
		to := run.StatusWaitingForApproval
		if s.Input != nil {
			to = run.StatusWaitingForInput
		}
		seg.emit(run.EventStatus, map[string]any{"status": to, "continued": true})
		if err := seg.suspend(ctx, to, seg.run.Suspended, 1); err != nil {
			return rt.fault(ctx, seg, err, res), nil
		}
		return res, nil
	}
	if !ok || d.input != (s.Input != nil) {
		return waitAgain()
	}
	ids := make([]string, len(s.Calls))
	for i, c := range s.Calls {
		ids[i] = c.ID
	}
	if s.Input != nil {
		ids = []string{s.Input.CallID}
	}
	done := callsAfter(evs, d.seq, ids)
	st := s.State
	rt.log.Info("decided turn continued after its worker died", "run", seg.run.UUID, "callsDone", len(done))
	seg.emit(run.EventStatus, map[string]any{"status": run.StatusRunning, "continued": true})
	if d.input {
		id := s.Input.CallID
		c := llm.ToolCall{ID: id, Name: s.Input.Tool}
		switch rc, ran := done[id]; {
		case ran:
			rt.recall(seg, &st, c, rc)
		case d.hasValues:
			var values any
			_ = json.Unmarshal(d.values, &values)
			rt.answer(seg, &st, c, tool.Result{Content: map[string]any{"answer": values}})
		default:
			return waitAgain() // the privacy level kept no answer: asked again
		}
		return rt.drive(ctx, seg, &st), nil
	}
	if !d.approved {
		for _, c := range s.Calls {
			lc := llm.ToolCall{ID: c.ID, Name: c.Tool, Arguments: string(c.Args)}
			if rc, ran := done[c.ID]; ran {
				rt.recall(seg, &st, lc, rc)
				continue
			}
			rt.answer(seg, &st, lc, denial(d.decider, d.reason, d.instruction))
		}
		calls := decided(seg, s.Calls)
		res = rt.drive(ctx, seg, &st)
		res.Calls = calls
		return res, nil
	}
	wrote := fieldsWritten{}
	for _, c := range s.Calls {
		lc := llm.ToolCall{ID: c.ID, Name: c.Tool, Arguments: string(c.Args)}
		if rc, ran := done[c.ID]; ran {
			rt.recall(seg, &st, lc, rc)
			wrote.add(c.Target)
			continue
		}
		released := releasedOf(c, s.Lang)
		if wrote.overlaps(c.Target) {
			released = nil
		}
		if err := rt.execute(ctx, seg, &st, approvedCall{pendingCall: c, released: released}); err != nil {
			res = rt.fault(ctx, seg, err, res)
			res.Calls = decided(seg, s.Calls)
			return res, nil
		}
		wrote.add(c.Target)
	}
	calls := decided(seg, s.Calls)
	res = rt.drive(ctx, seg, &st)
	res.Calls = calls
	return res, nil
}

// decisionOf finds the decision of the turn digest names among evs: the
// approval (not a changed preview) or the input that answered it.
func decisionOf(evs []run.Event, digest string, initiator int64) (recordedDecision, bool) {
	for _, e := range evs {
		var p struct {
			Approved       *bool           `json:"approved"`
			Reason         string          `json:"reason"`
			Instruction    string          `json:"instruction"`
			Decider        string          `json:"decider"`
			DecidedBy      int64           `json:"decidedBy"`
			TurnDigest     string          `json:"turnDigest"`
			PreviewChanged bool            `json:"previewChanged"`
			Status         string          `json:"status"`
			Values         json.RawMessage `json:"values"`
		}
		if json.Unmarshal(e.Payload, &p) != nil || p.TurnDigest != digest || p.Status != "" {
			continue
		}
		switch {
		case e.Kind == run.EventApproval && p.Approved != nil && !p.PreviewChanged:
			d := recordedDecision{seq: e.Sequence, approved: *p.Approved, reason: DenyReason(p.Reason), instruction: p.Instruction, decider: p.Decider}
			if d.decider == "" {
				d.decider = "other_user"
				if p.DecidedBy == initiator {
					d.decider = "run_owner"
				}
			}
			return d, true
		case e.Kind == run.EventInput:
			return recordedDecision{seq: e.Sequence, input: true, values: p.Values, hasValues: len(p.Values) > 0}, true
		}
	}
	return recordedDecision{}, false
}

// callsAfter is the calls of ids (the waiting turn's, in the order they
// run) answered after the event at seq, by call id, as their tool events
// store them. Below privacy metadata a tool event keeps no call id: such
// events count in order against the calls not otherwise answered — a
// turn's calls are answered one after the other, and a content write's
// tool event commits with the write, so a write without one wrote nothing.
func callsAfter(evs []run.Event, seq int64, ids []string) map[string]recordedCall {
	out := map[string]recordedCall{}
	var anonymous []recordedCall
	for _, e := range evs {
		if e.Sequence <= seq || e.Kind != run.EventTool {
			continue
		}
		var p struct {
			CallID  string          `json:"callId"`
			IsError bool            `json:"isError"`
			Result  json.RawMessage `json:"result"`
		}
		if json.Unmarshal(e.Payload, &p) != nil {
			continue
		}
		rc := recordedCall{isError: p.IsError, result: p.Result}
		if p.CallID == "" {
			anonymous = append(anonymous, rc)
		} else if _, seen := out[p.CallID]; !seen {
			out[p.CallID] = rc
		}
	}
	for _, id := range ids {
		if _, ok := out[id]; !ok && len(anonymous) > 0 {
			out[id], anonymous = anonymous[0], anonymous[1:]
		}
	}
	return out
}

// recall puts a call that ran before the interruption back into the
// transcript as recorded, without recording it again.
func (rt *Decider) recall(seg *segment, st *state, c llm.ToolCall, rc recordedCall) {
	content := continuedNote
	if len(rc.result) > 0 && json.Valid(rc.result) && seg.privacy == run.PrivacyFull {
		content = string(rc.result)
	}
	st.Messages = append(st.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: content})
	if seg.answered == nil {
		seg.answered = map[string]CallResult{}
	}
	seg.answered[c.ID] = CallResult{ID: c.ID, Tool: c.Name, IsError: rc.isError}
}
