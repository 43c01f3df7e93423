package chat

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"waymark/internal/agent"
	"waymark/internal/fault"
	"waymark/internal/run"
	"waymark/internal/store"
)

// Proposal outcomes, read from the run's steps — never from model text.
const (
	OutcomeApplied    = "applied"
	OutcomeCheck      = "check"
	OutcomeNotApplied = "not_applied"
	OutcomeSkipped    = "skipped"
	OutcomeVariant    = "variant"
	OutcomeKept       = "kept"
)

// decide executes a recorded decision through the runtime, then records or
// closes open points and the card's outcome, then applies the run's state.
func (s *decisions) decide(ctx context.Context, r row, card Card, answer, instruction string, after int64) {
	d := agent.Decision{TurnDigest: card.TurnDigest}
	switch answer {
	case AnswerApply, AnswerApprove:
		d.Approve = true
	case AnswerVariant:
		d.Reason, d.Instruction = agent.DenyVariant, instruction
	case AnswerSkip:
		d.Reason = agent.DenySkip
	case AnswerKeep:
		d.Reason = agent.DenyKeep
	}
	res, err := s.carryOut(ctx, r, card, d)
	if err != nil {
		if (errors.Is(err, agent.ErrNotWaiting) || errors.Is(err, agent.ErrStaleTurn)) && s.settleOwn(ctx, r, card) {
			return
		}
		s.handBack(ctx, r, err)
		return
	}
	// A continuation that failed, and a run cancelled before or while it
	// continued after the decision, record nothing (P.R4); so does a run
	// whose state cannot be read even after retries (fail closed). Approve
	// returns once the continuation paused or ended, so a later cancel
	// concerns a later card. A state Approve could not read (a store error
	// after the continuation) is read again: the skip was accepted, and its
	// open point must not be lost to that error.
	if res.Status == nil {
		_ = persist(ctx, s.log, "decided run's state", func() error {
			st, err := s.rt.Status(ctx, r.Owner, card.RunUUID)
			if err == nil {
				res.Status = &st
			}
			return err
		})
	}
	mayRecord := res.Status != nil && res.Status.Status != run.StatusFailed && res.Status.Status != run.StatusCancelled
	// The card's outcome and open points commit in the transaction that
	// gives the conversation the run's state (one commit fewer per
	// answer). They are recorded whether or not that compare-and-set wins,
	// as when they were a transaction of their own before it.
	s.settle.applyWith(ctx, r.ID, r.UpdatedAt, card.RunUUID, res.Answer, res.Status, s.settle.settleCard(r, card, answer, res.Calls, mayRecord, false, after))
}

// carryOut hands decision d on card to the runtime. An error that is not
// the runtime's refusal (a *fault.Error) is a store error before the
// decision took the run — Approve changes nothing until its guarded claim,
// and a claim that failed rolled back — so the decision is carried out
// again as store.RetryWait says (as persist does): the process continues
// here. A refusal is never retried; it is handed back.
func (s *decisions) carryOut(ctx context.Context, r row, card Card, d agent.Decision) (agent.Result, error) {
	var res agent.Result
	var err error
	since := time.Now() // wall time: store.RetryWait measures an outage on it, as store.Retry does
	for n := 1; ; n++ {
		res, err = s.rt.Approve(ctx, r.Owner, card.RunUUID, d)
		var refusal *fault.Error
		if err == nil || errors.As(err, &refusal) || ctx.Err() != nil {
			return res, err
		}
		wait, again := store.RetryWait(err, n, since)
		if !again {
			return res, err
		}
		s.log.Warn("decision failed; retrying", "conversation", r.ID, "run", card.RunUUID, "attempt", n, "wait", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return res, err
		}
	}
}

// settleOwn settles, as the editor's own, a decision the runtime refused as
// no longer waiting because it had reached the run already: an attempt whose
// commit was reported failed had landed (the database went away as it
// committed), or the job's twin — handed back to the workers after a lease
// while this one waited out an outage (rescueDecision) — carried it out.
// It reports whether it took care of it. It is no decision taken elsewhere
// (handOver): that follows the run with a notice, and the decision's record
// after the notice's message counted the card a second time. While the run
// goes on, whoever carries it on settles it (its job's result,
// QueuedResult, the recovery a lease later); once it paused or ended, the
// card is settled here under the claim (r as the claim left it), the
// record keyed by the messages as the claim left them.
func (s *decisions) settleOwn(ctx context.Context, r row, card Card) bool {
	evs, err := s.rt.Events(ctx, r.Owner, card.RunUUID, 0, 0)
	if err != nil {
		return false
	}
	ours := false
	for _, e := range evs {
		var p struct {
			Approved       *bool  `json:"approved"`
			TurnDigest     string `json:"turnDigest"`
			PreviewChanged bool   `json:"previewChanged"`
			DecidedBy      int64  `json:"decidedBy"`
		}
		if e.Kind == run.EventApproval && json.Unmarshal(e.Payload, &p) == nil && p.Approved != nil && !p.PreviewChanged &&
			p.TurnDigest == card.TurnDigest {
			ours = p.DecidedBy == r.Owner
			break
		}
	}
	if !ours {
		return false
	}
	st, err := s.rt.Status(ctx, r.Owner, card.RunUUID)
	if err != nil {
		return false
	}
	if !(st.Status.Terminal() || st.Status.Waiting()) {
		s.log.Info("decision carried out by another attempt; its run goes on", "conversation", r.ID, "run", card.RunUUID)
		return true
	}
	claimed := r
	claimed.Status = Processing // the claim the job holds; the record's guard compares it
	record, err := s.settle.settleDecidedCard(ctx, claimed, &card, st)
	if err != nil || record == nil {
		return false
	}
	s.settle.applyWith(ctx, r.ID, r.UpdatedAt, card.RunUUID, st.Answer, &st, record)
	return true
}

// handBack returns the decision r waited for to the editor after the runtime
// refused the answer, with the reason code; nothing is recorded (P.R4). A run
// that no longer waits for it was decided elsewhere first (handOver) or ended
// by the refusal (its state).
func (s *decisions) handBack(ctx context.Context, r row, cause error) {
	code := "refused"
	for _, f := range []*fault.Error{agent.ErrStaleTurn, agent.ErrPreviewChanged, agent.ErrSkillWithdrawn,
		agent.ErrProcessEnded, agent.ErrNotWaiting, agent.ErrSelfApproval, agent.ErrBadInput} {
		if errors.Is(cause, f) {
			code = f.Code()
		}
	}
	if code == agent.ErrSelfApproval.Code() {
		code = ErrNotOffered.Code() // the card's word for it: a second person must release
	}
	st, err := s.rt.Status(ctx, r.Owner, r.PendingRun)
	switch {
	case err != nil:
		s.settle.unclaim(ctx, r) // the card (or question) waits as before
		return
	case !waitsFor(r, st) && (st.Status.Waiting() || !st.Status.Terminal() || errors.Is(cause, agent.ErrNotWaiting)):
		err = s.settle.handOver(ctx, r, Processing, st)
	case !waitsFor(r, st):
		err = s.settle.settleRun(ctx, r, Processing, st, st.Answer, nil)
	default:
		c := change{status: r.Status, err: &code}
		if r.Status == AwaitingInput {
			q := questionOf(st)
			c.question = &q
		} else {
			nc := s.settle.cardOf(r, st)
			c.card = &nc
		}
		now := micros(s.clk)
		err = persist(ctx, s.log, "hand back", func() error {
			return s.db.InTx(ctx, func(tx *store.Tx) error {
				won, err := applyTx(ctx, tx, r.ID, evHandBack, Processing, c, now)
				if err != nil || !won {
					return err
				}
				return addMessageTx(ctx, tx, r.ID, Message{Role: "assistant", Notice: code}, now)
			})
		})
	}
	if err != nil {
		s.log.Error("hand back", "conversation", r.ID, "run", r.PendingRun, "err", err)
	}
}
