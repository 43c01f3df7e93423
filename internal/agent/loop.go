package agent

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"waymark/internal/content"
	"waymark/internal/llm"
	"waymark/internal/run"
	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// Result is what a call that drove a run returns: the run and, when the run
// completed in this call, its answer (shown to the caller whatever the privacy level).
type Result struct {
	UUID   string
	Answer string
	// Status is the run after a decision, as the decider sees it (a second
	// approver may no longer see the run once it left waiting).
	Status *Status
	// Calls are the calls of the decided turn as the runtime answered them,
	// in the card's order (after Approve; a call not run is absent). The
	// chat reads a write's result from them, not from the run's events,
	// which a privacy level may have emptied.
	Calls []CallResult
}

// CallResult is how the runtime answered one call: whether it was an error
// result, and the write step of a call that wrote.
type CallResult struct {
	ID      string          `json:"id"`
	Tool    string          `json:"tool"`
	IsError bool            `json:"isError"`
	Write   *tool.WriteStep `json:"write,omitempty"`
}

// state is the part of a run that travels through suspensions.
type state struct {
	Messages         []llm.Message `json:"messages"`
	Tools            []string      `json:"tools"` // offered tool names, fixed at start
	Language         int64         `json:"language"`
	MaxIterations    int           `json:"maxIterations,omitempty"`
	Iterations       int           `json:"iterations"`
	PromptTokens     int64         `json:"promptTokens"`
	CompletionTokens int64         `json:"completionTokens"`
	// System is the configuration prompt with the instruction sections of the
	// run's skills, composed from approval snapshots at start.
	System string `json:"system"`
	// Fenced is reference data placed before the first user message.
	Fenced string          `json:"fenced,omitempty"`
	Pins   []skill.Pin     `json:"pins,omitempty"`
	Loaded []skill.Section `json:"loaded,omitempty"` // on-demand skills loaded by the model
	// Process is the process the run holds (ADR-228), nil for none. The
	// runtime sets it from the preparer, never from a caller.
	Process *Hold `json:"process,omitempty"`
	// Sent is true once the run sent a provider call (admission, item 9).
	Sent bool `json:"sent,omitempty"`
}

func (st *state) offers(name string) bool {
	for _, n := range st.Tools {
		if n == name {
			return true
		}
	}
	return false
}

// drive runs model rounds until the run suspends, ends, or the segment loses the run.
func (rt *Driver) drive(ctx context.Context, seg *segment, st *state) Result {
	res := Result{UUID: seg.run.UUID}
	provider, err := rt.providers(ctx, seg.cfg)
	if err != nil {
		if store.Unreachable(err) {
			// The provider's API key is read from the database: one that
			// does not answer is an outage the run waits out (handed back),
			// not a configuration the run fails on.
			return rt.fault(ctx, seg, err, res)
		}
		seg.fail(ctx, run.ReasonNotRetryable, "provider_configuration", err.Error())
		return res
	}
	maxIter := seg.cfg.MaxIterations
	if st.MaxIterations > 0 && st.MaxIterations < maxIter {
		maxIter = st.MaxIterations
	}
	specs, err := rt.tools.EnabledSpecs(ctx, st.Tools)
	if err != nil {
		return rt.fault(ctx, seg, err, res)
	}
	// A settings scope of the caller (the start's, the approved write's)
	// served the tools offered; the rounds wait on the model, and every read
	// after one must see the settings as they are then.
	ctx = store.WithoutSettingsScope(ctx)
	llmSpecs := make([]llm.ToolSpec, len(specs))
	for i, s := range specs {
		llmSpecs[i] = llm.ToolSpec{Name: s.Name, Description: s.Description, Parameters: s.Schema}
	}
	for {
		if st.Iterations >= maxIter {
			_ = seg.settle(ctx, run.StatusFailed, run.ReasonMaxIterations, "max_iterations", "the run reached its iteration limit", "")
			return res
		}
		if b := seg.cfg.TokenBudget; b > 0 && st.PromptTokens+st.CompletionTokens >= b {
			_ = seg.settle(ctx, run.StatusFailed, run.ReasonBudgetExhausted, "budget_exhausted", "the run used up its token budget", "")
			return res
		}
		if rt.processEnded(ctx, seg, st) {
			return res
		}
		if st.Process != nil && st.Process.Admits && !st.Sent &&
			!admitted(st.System, st.Messages, int(seg.cfg.ContextWindow), int(seg.cfg.MaxOutputTokens)) {
			_ = seg.settle(ctx, run.StatusFailed, run.ReasonContextTruncated, "process_not_admitted",
				"the process does not fit the model's context window", "")
			return res
		}
		msgs, info, ok := fit(skill.SystemText(st.System, st.Loaded), withFence(st.Messages, st.Fenced), llmSpecs,
			int(seg.cfg.ContextWindow), int(seg.cfg.MaxOutputTokens))
		seg.emit(run.EventContext, info)
		if !ok {
			_ = seg.settle(ctx, run.StatusFailed, run.ReasonContextTruncated, "context_truncated", "the newest turn does not fit the context window", "")
			return res
		}
		req := llm.Request{Model: seg.cfg.Model, Messages: msgs, Tools: llmSpecs, MaxTokens: int(seg.cfg.MaxOutputTokens)}
		if rt.cfg.Stream {
			req.OnDelta = func(llm.Delta) {}
		}
		began := time.Now()
		var resp llm.Response
		err := seg.heartbeat(ctx, func(ctx context.Context) error {
			var err error
			resp, err = rt.callModel(ctx, seg.run.UUID, provider, req)
			return err
		})
		if rt.cfg.ObserveProvider != nil {
			rt.cfg.ObserveProvider(seg.cfg.UID, time.Since(began), err)
		}
		if err != nil {
			rt.providerFailed(ctx, seg, err)
			return res
		}
		st.Iterations++
		st.Sent = true
		st.PromptTokens += int64(resp.Usage.PromptTokens)
		st.CompletionTokens += int64(resp.Usage.CompletionTokens)
		seg.usage.PromptTokens += int64(resp.Usage.PromptTokens)
		seg.usage.CompletionTokens += int64(resp.Usage.CompletionTokens)
		seg.usage.Iterations++
		resp.Message.Role = llm.RoleAssistant
		seg.emit(run.EventLLM, llmPayload(resp))
		st.Messages = append(st.Messages, resp.Message)
		calls := resp.Message.ToolCalls
		if len(calls) == 0 {
			if err := seg.settle(ctx, run.StatusCompleted, run.ReasonCompleted, "", "", resp.Message.Content); err == nil {
				res.Answer = resp.Message.Content
			}
			return res
		}
		var suspended, ended bool
		if st.Process != nil {
			suspended, ended, err = rt.processGate(ctx, seg, st, calls)
		} else {
			suspended, err = rt.gate(ctx, seg, st, calls)
		}
		if err != nil {
			return rt.fault(ctx, seg, err, res)
		}
		if suspended || ended {
			return res
		}
		if err := seg.boundary(ctx); err != nil {
			return rt.fault(ctx, seg, err, res)
		}
	}
}

// gate decides about one turn of tool calls: it suspends the run before any
// approval-bound call or for an input question, or runs the turn's reads.
func (rt *Driver) gate(ctx context.Context, seg *segment, st *state, calls []llm.ToolCall) (bool, error) {
	var approval, input bool
	for _, c := range calls {
		d, ok := rt.tools.Def(c.Name)
		if !ok || !st.offers(c.Name) {
			continue
		}
		approval = approval || d.NeedsApproval()
		input = input || d.Input
	}
	switch {
	case approval:
		return rt.suspendForApproval(ctx, seg, st, calls)
	case input && len(calls) == 1:
		schema, err := tool.InputSchema(json.RawMessage(calls[0].Arguments))
		if err == nil {
			return true, rt.suspendForInput(ctx, seg, st, calls[0], schema)
		}
		rt.answer(seg, st, calls[0], tool.ErrorResult(err.Error()))
		return false, nil
	}
	for _, c := range calls {
		if err := rt.runRead(ctx, seg, st, c); err != nil {
			return false, err
		}
	}
	return false, nil
}

// runRead runs one call that needs no decision (or answers why it cannot run).
func (rt *Driver) runRead(ctx context.Context, seg *segment, st *state, c llm.ToolCall) error {
	d, ok := rt.tools.Def(c.Name)
	switch {
	case !ok || !st.offers(c.Name):
		rt.answer(seg, st, c, tool.ErrorResult("unknown tool "+c.Name))
		return nil
	case c.Name == LoadSkillTool:
		return rt.loadSkill(ctx, seg, st, c)
	case d.Input:
		rt.answer(seg, st, c, tool.ErrorResult(c.Name+" must be the only call of its turn"))
		return nil
	}
	var res tool.Result
	err := seg.heartbeat(ctx, func(ctx context.Context) error {
		if d.Effect == tool.EffectRead {
			var end func()
			ctx, end = rt.db.ReadScope(ctx) // a read tool's reads share one snapshot
			defer end()
		}
		var err error
		res, err = rt.tools.Execute(ctx, c.Name, rt.toolCall(seg, st, c))
		return err
	})
	if err != nil {
		return err
	}
	rt.answer(seg, st, c, res)
	return nil
}

// toolCall builds the call as the run's initiator.
func (rt *Driver) toolCall(seg *segment, st *state, c llm.ToolCall) tool.Call {
	call := tool.Call{Run: seg.run.UUID, CallID: c.ID, User: seg.run.Initiator, Language: st.Language, Args: json.RawMessage(c.Arguments),
		Emit: func(kind string, payload any) error { seg.emit(run.Kind(kind), payload); return nil }}
	if st.Process != nil {
		call.Subject = st.Process.Subject // the subject record is on the tool context (item 10)
	}
	return call
}

// answer appends a tool result to the transcript and records the tool event.
func (rt *Driver) answer(seg *segment, st *state, c llm.ToolCall, res tool.Result) {
	body, err := json.Marshal(res.Content)
	if err != nil {
		body = []byte(`{"error":"unrepresentable result"}`)
	}
	st.Messages = append(st.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: string(body)})
	if seg.answered == nil {
		seg.answered = map[string]CallResult{}
	}
	seg.answered[c.ID] = CallResult{ID: c.ID, Tool: c.Name, IsError: res.IsError, Write: res.Write}
	p := map[string]any{"callId": c.ID, "tool": c.Name, "isError": res.IsError, "arguments": c.Arguments, "result": json.RawMessage(body)}
	if res.Write != nil {
		p["completeness"] = res.Write.Completeness
		p["hookFailedAfterWrite"] = res.Write.HookFailedAfterWrite
	}
	seg.emit(run.EventTool, p)
}

// providerFailed settles or requeues after a failed model call.
func (rt *Driver) providerFailed(ctx context.Context, seg *segment, err error) {
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return // the worker is shutting down: the lease expires and the reaper requeues
	}
	retryable := llm.IsRetryable(err)
	class := "provider_not_retryable"
	var le *llm.Error
	if errors.As(err, &le) {
		class = "provider_" + le.Kind.String()
	}
	switch {
	case retryable && seg.queued && !seg.resumed && seg.run.RequeueCount < seg.rt.cfg.MaxRequeues:
		if rerr := seg.requeue(ctx); rerr != nil && !errors.Is(rerr, errLost) {
			rt.log.Error("requeue failed", "run", seg.run.UUID, "err", rerr)
		}
	case retryable && seg.queued && !seg.resumed:
		seg.fail(ctx, run.ReasonRetriesExhausted, class, err.Error())
	case seg.queued && !seg.resumed:
		seg.fail(ctx, run.ReasonNotRetryable, class, err.Error())
	default:
		seg.fail(ctx, run.ReasonProviderFailed, class, err.Error())
	}
}

// fault handles an infrastructure error inside a segment.
func (rt *Driver) fault(ctx context.Context, seg *segment, err error, res Result) Result {
	if errors.Is(err, errLost) {
		rt.log.Info("segment stopped: the run is no longer ours", "run", seg.run.UUID, "owner", seg.owner)
		return res
	}
	// Waymark's own database not answering is an outage the run waits out
	// (handed back); the site's CMS not answering at a write is the write's
	// failure (write_target_unreachable), whatever its driver's error looks
	// like, and a write whose state is unknown is never handed back blind.
	if store.Unreachable(err) && !errors.Is(err, content.ErrStateUnknown) && !errors.Is(err, content.ErrUnreachable) {
		rt.handBack(ctx, seg, err)
		return res
	}
	rt.log.Error("run failed", "run", seg.run.UUID, "err", err)
	switch {
	case errors.Is(err, content.ErrUnreachable):
		seg.fail(ctx, run.ReasonNotRetryable, "write_target_unreachable", content.ErrUnreachable.Error())
		return res
	case errors.Is(err, content.ErrRefused):
		seg.fail(ctx, run.ReasonNotRetryable, "write_refused", content.ErrRefused.Error())
		return res
	case errors.Is(err, content.ErrStateUnknown):
		seg.fail(ctx, run.ReasonNotRetryable, "write_state_unknown", content.ErrStateUnknown.Error()+"; a retry writes it at most once")
		return res
	}
	seg.fail(ctx, run.ReasonNotRetryable, "internal", "internal error")
	return res
}

// withFence returns msgs with the fenced reference data before the first user message's text.
func withFence(msgs []llm.Message, fenced string) []llm.Message {
	if fenced == "" {
		return msgs
	}
	out := append([]llm.Message(nil), msgs...)
	for i, m := range out {
		if m.Role == llm.RoleUser {
			out[i].Content = fenced + "\n\n" + m.Content
			break
		}
	}
	return out
}

func llmPayload(resp llm.Response) map[string]any {
	calls := make([]map[string]any, len(resp.Message.ToolCalls))
	for i, c := range resp.Message.ToolCalls {
		calls[i] = map[string]any{"callId": c.ID, "tool": c.Name, "arguments": c.Arguments}
	}
	return map[string]any{"finishReason": resp.FinishReason, "content": resp.Message.Content, "toolCalls": calls,
		"toolCallCount": len(calls), "promptTokens": resp.Usage.PromptTokens, "completionTokens": resp.Usage.CompletionTokens}
}

// handBack gives up a segment whose step failed because the database could
// not be reached, without failing its run: the step's transaction rolled
// back, and the stored run is what a kill of its worker at that point
// leaves, which the reaper continues (requeued from the stored run, or
// dead-lettered inside a fenced write). The lease is ended at once — once
// the database answers again, tried through an outage as store.RetryWait
// says — and a reaper pass requeues the run, so its conversation waits for
// the outage and not for a lease on top. Given up, the lease lapses and the
// installation's reaper takes the run a lease later.
func (rt *Driver) handBack(ctx context.Context, seg *segment, cause error) {
	rt.log.Warn("database unreachable; the run is handed back to the reaper", "run", seg.run.UUID, "err", cause)
	since := time.Now()
	for n := 1; ; n++ {
		won, err := rt.runs.Renew(ctx, seg.run.UUID, run.Renewal{Owner: seg.owner, Lease: time.Microsecond})
		if err == nil {
			if !won {
				return // settled or taken meanwhile
			}
			break
		}
		wait, again := store.RetryWait(err, n, since)
		if !again || ctx.Err() != nil {
			rt.log.Warn("lease not ended; the reaper takes the run when it lapses", "run", seg.run.UUID, "err", err)
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
	if _, err := rt.Reap(ctx); err != nil {
		rt.log.Warn("reap after handing a run back", "run", seg.run.UUID, "err", err)
	}
}
