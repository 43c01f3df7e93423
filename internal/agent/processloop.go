package agent

import (
	"context"
	"encoding/json"

	"waymark/internal/llm"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// Tool names the runtime treats specially in a process run.
const setProgressTool = "set_progress"

// processEnded checks, before a provider or tool call of a process run, that
// the run still holds its process (ADR-228 item 7); when it does not — or the
// lineage cannot be read (fail closed) — it settles the run failed with
// process_ended under the owner guard and reports true.
func (rt *Driver) processEnded(ctx context.Context, seg *segment, st *state) bool {
	held, msg, err := rt.processHeld(ctx, st)
	if held {
		return false
	}
	if store.Unreachable(err) {
		rt.handBack(ctx, seg, err) // an outage ends no process: the run goes on after it
		return true
	}
	_ = seg.settle(ctx, run.StatusFailed, run.ReasonProcessEnded, "process_ended", msg, "")
	return true
}

// processHeld reports whether the run may go on: it holds no process, or
// its process is still held; otherwise why not, and the error of a lineage
// that could not be read.
func (rt *Driver) processHeld(ctx context.Context, st *state) (bool, string, error) {
	if st.Process == nil || rt.preparer == nil {
		return true, "", nil
	}
	held, err := rt.preparer.Holds(ctx, st.Process.Origin)
	switch {
	case err != nil:
		return false, "the process lineage cannot be read", err
	case !held:
		return false, "the process was ended", nil
	}
	return true, "", nil
}

// processGate is the gate of a process run (item 10): at most one
// approval-bound call per turn is pending — the first that declares a write,
// else the first approval-bound one; reads run before the suspend, in turn
// order; every other call gets an error result.
func (rt *Driver) processGate(ctx context.Context, seg *segment, st *state, calls []llm.ToolCall) (suspended bool, ended bool, err error) {
	pending := -1
	for i, c := range calls {
		d, ok := rt.tools.Def(c.Name)
		if !ok || !st.offers(c.Name) || !d.NeedsApproval() {
			continue
		}
		if pending < 0 || (d.Effect.Writes() && !rt.declaresWrite(calls[pending].Name)) {
			pending = i
		}
	}
	if pending < 0 && len(calls) == 1 {
		if d, ok := rt.tools.Def(calls[0].Name); ok && d.Input && st.offers(calls[0].Name) {
			s, err := rt.gate(ctx, seg, st, calls)
			return s, false, err
		}
	}
	for i, c := range calls {
		if i == pending {
			continue
		}
		d, ok := rt.tools.Def(c.Name)
		switch {
		case !ok || !st.offers(c.Name):
			rt.answer(seg, st, c, tool.ErrorResult("unknown tool "+c.Name))
		case d.NeedsApproval():
			rt.answer(seg, st, c, tool.ErrorResult("one approval per turn in a process"))
		case d.Input || d.Effect != tool.EffectRead:
			rt.answer(seg, st, c, tool.ErrorResult("not executed while a proposal waits for approval"))
		case c.Name == setProgressTool && completes(c) && pending >= 0:
			rt.answer(seg, st, c, tool.ErrorResult("report completion after the decision"))
		default:
			if rt.processEnded(ctx, seg, st) {
				return false, true, nil
			}
			if err := rt.runRead(ctx, seg, st, c); err != nil {
				return false, false, err
			}
			if c.Name == setProgressTool && completes(c) && pending < 0 {
				if err := rt.complete(ctx, seg, st); err != nil {
					return false, false, err
				}
			}
		}
	}
	if pending < 0 {
		return false, false, nil
	}
	suspended, err = rt.suspendForApproval(ctx, seg, st, calls[pending:pending+1])
	return suspended, false, err
}

// complete lets the process go after the run reported its completion (issue
// 11 item 1): the origin records its lineage as released first, then this
// run, so no turn of the lineage — earlier, later or parallel — hands the
// process on. The run itself goes on without the process to its closing
// answer and ends completed; a stop as process_ended is only for an explicit
// end or a withdrawn pin.
func (rt *Driver) complete(ctx context.Context, seg *segment, st *state) error {
	if origin := st.Process.Origin; origin != "" && origin != seg.run.UUID {
		if err := rt.preparer.Release(ctx, origin); err != nil {
			return err
		}
	}
	if err := rt.preparer.Release(ctx, seg.run.UUID); err != nil {
		return err
	}
	st.Process = nil
	return nil
}

func (rt *Driver) declaresWrite(name string) bool {
	d, ok := rt.tools.Def(name)
	return ok && d.Effect.Writes()
}

// completes reports a set_progress call that reports completion.
func completes(c llm.ToolCall) bool {
	var a struct {
		Completed bool `json:"completed"`
	}
	return json.Unmarshal([]byte(c.Arguments), &a) == nil && a.Completed
}

// admitted reports whether a process this run starts fits the model's window
// with 10 % headroom (item 9): the system text with the process section and
// the newest turn.
func admitted(system string, msgs []llm.Message, window, maxOut int) bool {
	budget := (window - maxOut) * 9 / 10
	n := estimate(llm.Message{Role: llm.RoleSystem, Content: system})
	last := 0
	for i, m := range msgs {
		if m.Role == llm.RoleUser {
			last = i
		}
	}
	for _, m := range msgs[last:] {
		n += estimate(m)
	}
	return n <= budget
}
