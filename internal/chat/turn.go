package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"waymark/internal/agent"
	"waymark/internal/content"
	"waymark/internal/llm"
	"waymark/internal/run"
	"waymark/internal/store"
)

// Send adds the editor's message and dispatches a turn (202). A message while
// a turn is queued or running is ErrBusy. A message while a process run
// waits withdraws it (cancelIfWaiting): if the cancel lost because someone
// released it, the message is refused as busy; if the run already ended, it
// is handed back first. An ordinary conversation leaves its run waiting and
// refuses the message as busy. A withdrawn proposal records no open point.
func (s *Service) Send(ctx context.Context, actor, id int64, text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return fmt.Errorf("%w: content: empty", ErrInvalid)
	}
	r, err := s.owned(ctx, actor, id)
	if err != nil {
		return err
	}
	if r, err = s.reconcile(ctx, r); err != nil {
		return err
	}
	from := r.Status
	switch r.Status {
	case Processing, AwaitingInput:
		return ErrBusy
	case AwaitingApproval:
		if !r.Process {
			return ErrBusy
		}
		won, err := s.rt.CancelIfWaiting(ctx, r.Owner, r.PendingRun)
		if err != nil {
			return err
		}
		if !won {
			st, err := s.rt.Status(ctx, r.Owner, r.PendingRun)
			if err != nil || !st.Status.Terminal() {
				return ErrBusy // someone released it: it runs now
			}
			if r, err = s.reconcile(ctx, r); err != nil {
				return err
			}
			from = r.Status
		} else {
			r.LastRun = r.PendingRun // the withdrawn run is the next turn's predecessor
		}
	}
	now := s.now()
	var won bool
	empty, none := "", (*Card)(nil)
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		won, err = casTx(ctx, tx, r.ID, []Status{from}, change{status: Processing, lastRun: &r.LastRun, pendingRun: &empty, card: &none}, now)
		if err != nil || !won {
			return err
		}
		return addMessageTx(ctx, tx, r.ID, Message{Role: "user", Content: text}, now)
	})
	if err != nil {
		return err
	}
	if !won {
		return ErrBusy
	}
	s.goRun(func(ctx context.Context) { s.turn(ctx, r.ID) })
	return nil
}

// turn runs one turn of the conversation and applies its result.
func (s *Service) turn(ctx context.Context, id int64) {
	r, err := getRow(ctx, s.db, id)
	if err != nil {
		s.log.Error("turn", "conversation", id, "err", err)
		return
	}
	msgs, err := messages(ctx, s.db, id)
	if err != nil {
		s.fail(ctx, r, err)
		return
	}
	req := agent.Request{Configuration: r.Configuration, Language: r.Language, Messages: transcript(msgs)}
	switch {
	case r.LastRun != "":
		req.Predecessor = r.LastRun // every later turn names only its predecessor
	case r.Process:
		req.Invocation = &agent.Invocation{Skill: r.Skill, Subject: &content.Ref{Table: "pages", UID: r.Page, Language: r.Language}}
	}
	req.Context = s.pointsPrompt(ctx, r) // the open points of this skill on this page (P.O1)
	req.OnStart = func(uuid string) {
		// The running run is followed live (progress, highlight) until it pauses or ends.
		_, _ = s.db.Exec(ctx, "UPDATE conversations SET pending_run_uuid = ? WHERE id = ? AND status = ?", uuid, r.ID, string(Processing))
	}
	res, err := s.rt.Run(ctx, r.Owner, req)
	if err != nil {
		s.fail(ctx, r, err)
		return
	}
	s.apply(ctx, r.ID, res.UUID, res.Answer)
}

// transcript is the conversation as model messages: users and answers.
func transcript(msgs []Message) []llm.Message {
	var out []llm.Message
	for _, m := range msgs {
		if (m.Role == "user" || m.Role == "assistant") && strings.TrimSpace(m.Content) != "" {
			out = append(out, llm.Message{Role: m.Role, Content: m.Content})
		}
	}
	return out
}

// apply maps a run's state onto the conversation (from processing).
func (s *Service) apply(ctx context.Context, id int64, runUUID, answer string) {
	r, err := getRow(ctx, s.db, id)
	if err != nil {
		return
	}
	st, err := s.rt.Status(ctx, r.Owner, runUUID)
	if err != nil {
		s.fail(ctx, r, err)
		return
	}
	now := s.now()
	empty := ""
	c := change{progress: jsonOf(st.Progress), highlight: jsonOf(st.Highlight), err: &empty} // a turn that went on clears the error
	var msg *Message
	switch {
	case st.Status == run.StatusWaitingForApproval:
		card := s.cardOf(r, st)
		c.status, c.pendingRun, c.card = AwaitingApproval, &runUUID, &card
	case st.Status == run.StatusWaitingForInput:
		c.status, c.pendingRun = AwaitingInput, &runUUID
		if st.Pending != nil {
			msg = &Message{Role: "assistant", Content: st.Pending.Question}
		}
	case st.Status == run.StatusCompleted:
		c.status, c.lastRun, c.pendingRun = Idle, &runUUID, &empty
		msg = &Message{Role: "assistant", Content: answer}
	default:
		reason := string(st.TerminationReason)
		if st.Refusal != "" {
			reason = st.Refusal
		}
		c.status, c.lastRun, c.pendingRun, c.err = Failed, &runUUID, &empty, &reason
		msg = &Message{Role: "assistant", Content: "", Notice: reason}
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		won, err := casTx(ctx, tx, id, []Status{Processing}, c, now)
		if err != nil || !won || msg == nil {
			return err
		}
		return addMessageTx(ctx, tx, id, *msg, now)
	})
	if err != nil {
		s.log.Error("apply run", "conversation", id, "run", runUUID, "err", err)
	}
}

func jsonOf(m map[string]any) *json.RawMessage {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	raw := json.RawMessage(b)
	return &raw
}

// fail marks the conversation failed after an error it cannot hand on.
func (s *Service) fail(ctx context.Context, r row, cause error) {
	s.log.Warn("chat turn failed", "conversation", r.ID, "err", cause)
	code := "failed"
	if errors.Is(cause, agent.ErrConfiguration) {
		code = "configuration_not_found"
	}
	_ = s.db.InTx(ctx, func(tx *store.Tx) error {
		won, err := casTx(ctx, tx, r.ID, []Status{Processing}, change{status: Failed, err: &code}, s.now())
		if err != nil || !won {
			return err
		}
		return addMessageTx(ctx, tx, r.ID, Message{Role: "assistant", Notice: code}, s.now())
	})
}

// cardOf builds the card the server offers for a waiting run: the process
// answers for a process-run write card with exactly one pending call,
// approve/cancel for every other card.
func (s *Service) cardOf(r row, st agent.Status) *Card {
	p := st.Pending
	c := &Card{RunUUID: st.UUID, TurnDigest: p.TurnDigest, ApproveBlocked: p.ApproveBlocked, Calls: []CardCall{}}
	for _, call := range p.Calls {
		c.Calls = append(c.Calls, CardCall{ID: call.ID, Tool: call.Tool, DeclaresWrite: call.DeclaresWrite, Target: call.Target,
			Heading: call.Heading, Preview: call.Preview})
	}
	if r.Process && len(c.Calls) == 1 && c.Calls[0].DeclaresWrite {
		c.Answers = []string{AnswerApply, AnswerVariant, AnswerSkip, AnswerKeep}
	} else {
		c.Answers = []string{AnswerApprove, AnswerCancel}
	}
	return c
}
