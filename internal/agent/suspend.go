package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"waymark/internal/access"
	"waymark/internal/llm"
	"waymark/internal/run"
	"waymark/internal/tool"
)

// suspended is the stored state of a waiting run.
type suspended struct {
	V     int           `json:"v"`
	State state         `json:"state"`
	Calls []pendingCall `json:"calls"`
	// Digest names the waiting turn: a decision must carry it.
	Digest string      `json:"digest"`
	Lang   string      `json:"lang"` // backend language the previews are in
	Input  *inputPause `json:"input,omitempty"`
}

// pendingCall is one call of the waiting turn with what the approver sees.
type pendingCall struct {
	ID            string          `json:"id"`
	Tool          string          `json:"tool"`
	Args          json.RawMessage `json:"args"`
	DeclaresWrite bool            `json:"declaresWrite"`
	Effect        tool.Effect     `json:"effect"`
	Target        *tool.Target    `json:"target,omitempty"`
	Preview       *tool.Preview   `json:"preview,omitempty"`
	PreviewError  string          `json:"previewError,omitempty"`
	// denied: the acting user may not perform this write (tool.ErrWriteDenied);
	// it is answered to the model, never shown on a card.
	denied bool
	// unoffered: the turn does not offer the call's tool (any more); it is
	// answered "unknown tool", never executed.
	unoffered bool
}

// inputPause is a question waiting for the user's answer.
type inputPause struct {
	CallID   string          `json:"callId"`
	Tool     string          `json:"tool"`
	Question string          `json:"question"`
	Schema   json.RawMessage `json:"schema"`
}

const suspendedVersion = 1

func decodeSuspended(b []byte) (suspended, error) {
	var s suspended
	if err := json.Unmarshal(b, &s); err != nil {
		return suspended{}, fmt.Errorf("%w: %w", ErrCorruptState, err)
	}
	if s.V != suspendedVersion || s.Digest == "" {
		return suspended{}, fmt.Errorf("%w: version %d", ErrCorruptState, s.V)
	}
	return s, nil
}

// decodeSuspendedView decodes what a status view shows of a suspended state:
// everything but the transcript and counters, which the decoder skips
// instead of building (a status is read far more often than a run resumes).
func decodeSuspendedView(b []byte) (suspended, error) {
	var v struct {
		V     int `json:"v"`
		State struct {
			Process *Hold `json:"process"`
		} `json:"state"`
		Calls  []pendingCall `json:"calls"`
		Digest string        `json:"digest"`
		Lang   string        `json:"lang"`
		Input  *inputPause   `json:"input"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return suspended{}, fmt.Errorf("%w: %w", ErrCorruptState, err)
	}
	if v.V != suspendedVersion || v.Digest == "" {
		return suspended{}, fmt.Errorf("%w: version %d", ErrCorruptState, v.V)
	}
	return suspended{V: v.V, State: state{Process: v.State.Process}, Calls: v.Calls, Digest: v.Digest, Lang: v.Lang, Input: v.Input}, nil
}

// suspendedDigest decodes only the turn digest of a suspended state.
func suspendedDigest(b []byte) (string, error) {
	var v struct {
		V      int    `json:"v"`
		Digest string `json:"digest"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return "", fmt.Errorf("%w: %w", ErrCorruptState, err)
	}
	if v.V != suspendedVersion || v.Digest == "" {
		return "", fmt.Errorf("%w: version %d", ErrCorruptState, v.V)
	}
	return v.Digest, nil
}

// turnDigest hashes the run and the pending calls (and the question of an
// input pause) — not the transcript or counters, which change every round.
func turnDigest(runUUID string, calls []pendingCall, input *inputPause) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode(runUUID)
	for _, c := range calls {
		_ = enc.Encode([]any{c.ID, c.Tool, compactJSON(c.Args)})
	}
	if input != nil {
		_ = enc.Encode([]any{input.CallID, input.Tool, compactJSON(input.Schema)})
	}
	return "v1:" + hex.EncodeToString(h.Sum(nil))
}

func compactJSON(b json.RawMessage) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// previewLang is the initiator's backend language (previews are in the acting user's language).
func (rt *Driver) previewLang(ctx context.Context, user int64) string {
	u, err := access.LoadActor(ctx, rt.dir, rt.db, user)
	if err != nil || u.BackendLanguage == "" {
		return "en"
	}
	return u.BackendLanguage
}

// pendingCalls describes the turn's calls with targets and previews.
func (rt *Driver) pendingCalls(ctx context.Context, seg *segment, st *state, calls []llm.ToolCall, lang string) []pendingCall {
	out := make([]pendingCall, len(calls))
	for i, c := range calls {
		p := pendingCall{ID: c.ID, Tool: c.Name, Args: json.RawMessage(c.Arguments)}
		if !json.Valid(p.Args) {
			p.Args = json.RawMessage(`{}`)
		}
		d, ok := rt.tools.Def(c.Name)
		p.unoffered = !ok || !st.offers(c.Name)
		if !p.unoffered {
			p.Effect = d.Effect
			p.DeclaresWrite = d.Effect.Writes()
			if p.DeclaresWrite {
				if t, ok := rt.tools.Target(c.Name, p.Args); ok {
					p.Target = &t
				}
				pv, err := rt.tools.Preview(ctx, c.Name, rt.toolCall(seg, st, c), lang)
				if err != nil {
					p.PreviewError = previewError(err)
					p.denied = errors.Is(err, tool.ErrWriteDenied)
				} else {
					p.Preview = &pv
				}
			}
		}
		out[i] = p
	}
	return out
}

func previewError(err error) string {
	var re *tool.ResultError
	if errors.As(err, &re) {
		return re.Message
	}
	var ae *tool.ArgsError
	if errors.As(err, &ae) {
		return ae.Error()
	}
	return "no preview"
}

// suspendForApproval stores the turn with its previews and waits for a
// decision; it reports whether the run suspended. A write the acting user may
// not perform never becomes a card: the model gets the
// preview's refusal ("permission_denied: …") as the call's error result, and
// when no call of the turn needs an approval then, the rest of the turn runs
// as reads and the run goes on.
func (rt *Driver) suspendForApproval(ctx context.Context, seg *segment, st *state, calls []llm.ToolCall) (bool, error) {
	rctx, end := rt.db.ReadScope(ctx) // the previews read one snapshot
	lang := rt.previewLang(rctx, seg.run.Initiator)
	pending := rt.pendingCalls(rctx, seg, st, calls, lang)
	end()
	var kept []pendingCall
	var keptCalls []llm.ToolCall
	approval := false
	for i, p := range pending {
		if p.denied {
			rt.answer(seg, st, calls[i], tool.ErrorResult(p.PreviewError))
			continue
		}
		kept, keptCalls = append(kept, p), append(keptCalls, calls[i])
		if d, ok := rt.tools.Def(p.Tool); ok && st.offers(p.Tool) && d.NeedsApproval() {
			approval = true
		}
	}
	if !approval {
		for _, c := range keptCalls {
			if err := rt.runRead(ctx, seg, st, c); err != nil {
				return false, err
			}
		}
		return false, nil
	}
	s := suspended{V: suspendedVersion, State: *st, Calls: kept, Lang: lang}
	s.Digest = turnDigest(seg.run.UUID, s.Calls, nil)
	body, err := json.Marshal(s)
	if err != nil {
		return false, err
	}
	names := make([]string, len(s.Calls))
	for i, c := range s.Calls {
		names[i] = c.Tool
	}
	seg.emit(run.EventApproval, map[string]any{"status": run.StatusWaitingForApproval, "turnDigest": s.Digest, "tools": names, "callCount": len(names)})
	seg.emit(run.EventStatus, map[string]any{"status": run.StatusWaitingForApproval})
	return true, seg.suspend(ctx, run.StatusWaitingForApproval, body, 2)
}

// suspendForInput stores a question and waits for the answer.
func (rt *Driver) suspendForInput(ctx context.Context, seg *segment, st *state, c llm.ToolCall, schema json.RawMessage) error {
	var q struct {
		Question string `json:"question"`
	}
	_ = json.Unmarshal([]byte(c.Arguments), &q)
	in := &inputPause{CallID: c.ID, Tool: c.Name, Question: q.Question, Schema: schema}
	s := suspended{V: suspendedVersion, State: *st, Calls: []pendingCall{{ID: c.ID, Tool: c.Name, Args: json.RawMessage(c.Arguments)}},
		Input: in, Lang: rt.previewLang(ctx, seg.run.Initiator)}
	s.Digest = turnDigest(seg.run.UUID, s.Calls, in)
	body, err := json.Marshal(s)
	if err != nil {
		return err
	}
	seg.emit(run.EventInput, map[string]any{"status": run.StatusWaitingForInput, "turnDigest": s.Digest, "tool": c.Name})
	seg.emit(run.EventStatus, map[string]any{"status": run.StatusWaitingForInput})
	return seg.suspend(ctx, run.StatusWaitingForInput, body, 2)
}
