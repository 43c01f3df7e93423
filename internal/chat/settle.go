package chat

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"waymark/internal/agent"
	"waymark/internal/clock"
	"waymark/internal/openpoint"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// settler gives a conversation the state of its run — a card or a question
// while the run waits, idle with its reply once it completed, failed with
// the reason otherwise — together with what a decided card records (its
// outcome, its open points), in one transaction: the end every turn,
// decision and recovery reaches. It depends on no other part of the chat.
type settler struct {
	db     *store.DB
	rt     runStates
	clk    clock.Clock
	log    *slog.Logger
	points PointKeeper // may be nil: no open points
}

// runStates is what settling needs of the runtime: a run's state and events.
type runStates interface {
	Status(ctx context.Context, actor int64, id string) (agent.Status, error)
	Events(ctx context.Context, actor int64, id string, after int64, limit int) ([]agent.Event, error)
}

func newSettler(db *store.DB, rt runStates, clk clock.Clock, log *slog.Logger, points PointKeeper) *settler {
	return &settler{db: db, rt: rt, clk: clk, log: log, points: points}
}

// apply maps the state of the conversation's own run onto it while it is
// still processing as it was at at (its updated_at then; zero: as it is
// now), retrying after a store error (persist); a state it cannot read even
// so fails the conversation rather than leave it processing.
func (s *settler) apply(ctx context.Context, id int64, at time.Time, runUUID, answer string) {
	s.applyWith(ctx, id, at, runUUID, answer, nil, nil)
}

// applyWith is apply that also runs record, when set, in the transaction of
// the compare-and-set, before it (a decided card's outcome, decide) — also
// when the conversation has moved on and the compare-and-set loses. known,
// when set, is the run's state as the runtime returned it to the
// conversation's owner once the decision's continuation paused or ended
// (agent.Result.Status): the first attempt takes it instead of reading the
// run again (an answer's statements); a retry reads it.
//
// A result is applied even when the job's context ended meanwhile (its
// process stops): the run's state is decided, and a stop must not lose it.
// A run that is not settled — its segment halted at a process's stop and
// left it running, released to the reaper to requeue — changes nothing:
// the conversation stays processing, and takes the run's state and answer
// from the worker that runs it again (QueuedResult), or, should that not
// come, from recoverInterrupted a lease later, which also records a
// decided card. (Following the run instead lost the answer: a read took
// the completed run's state, which keeps no answer below privacy full,
// before QueuedResult could hand it over.)
func (s *settler) applyWith(ctx context.Context, id int64, at time.Time, runUUID, answer string, known *agent.Status, record func(ctx context.Context, tx *store.Tx) error) {
	ctx = context.WithoutCancel(ctx)
	var r row
	unsettled := false
	err := persist(ctx, s.log, "apply run", func() error {
		var err error
		if r, err = getRow(ctx, s.db, id); err != nil {
			return err
		}
		switch {
		case !at.IsZero():
			// The processing meant; settleRunWith's guard compares it. r's
			// status as read now does not matter: read after another process
			// settled the conversation, it would drop the guard, and the
			// result would take back an answer claimed since on the card.
			r.Status, r.UpdatedAt = Processing, at
		case r.Status != Processing:
			return nil // settled since: nothing of this processing is left to apply
		}
		var st agent.Status
		if known != nil && known.UUID == runUUID {
			st, known = *known, nil // a retry reads the run
		} else if st, err = s.rt.Status(ctx, r.Owner, runUUID); err != nil {
			return err
		}
		if unsettled = !st.Status.Terminal() && !st.Status.Waiting(); unsettled {
			return nil
		}
		return s.settleRunWith(ctx, r, Processing, st, answer, nil, record)
	})
	if err == nil && unsettled {
		s.log.Info("the run is not settled (its worker stopped); the conversation waits for it", "conversation", id, "run", runUUID)
		return
	}
	if err != nil {
		s.log.Error("apply run", "conversation", id, "run", runUUID, "err", err)
		if r.ID != 0 {
			s.fail(ctx, r, err)
		}
	}
}

// settleRun gives conversation r (now in status from) the state of run st: a
// card or a question while it waits, idle with its answer once it completed,
// idle once it was cancelled, failed with the reason otherwise. A turn that
// went on clears the error. notice, when set, goes first into the transcript
// (a decision taken elsewhere); it then stands for a cancel and for an
// answer the privacy level did not keep.
func (s *settler) settleRun(ctx context.Context, r row, from Status, st agent.Status, answer string, notice *Message) error {
	return s.settleRunWith(ctx, r, from, st, answer, notice, nil)
}

// settleRunWith is settleRun that also runs record, when set, in its
// transaction before the compare-and-set (applyWith).
func (s *settler) settleRunWith(ctx context.Context, r row, from Status, st agent.Status, answer string, notice *Message,
	record func(ctx context.Context, tx *store.Tx) error) error {
	runUUID, empty := st.UUID, ""
	c := change{progress: jsonOf(st.Progress), highlight: jsonOf(st.Highlight), err: &empty, seenRun: &runUUID}
	var msgs []Message
	if notice != nil {
		msgs = append(msgs, *notice)
	}
	completed := false
	switch st.Status {
	case run.StatusWaitingForApproval:
		card := s.cardOf(r, st)
		c.status, c.pendingRun, c.card = AwaitingApproval, &runUUID, &card
	case run.StatusWaitingForInput:
		q := questionOf(st)
		c.status, c.pendingRun, c.question = AwaitingInput, &runUUID, &q
		if q != nil {
			msgs = append(msgs, Message{Role: "assistant", Content: q.Question})
		}
	case run.StatusCompleted:
		c.status, c.lastRun, c.pendingRun = Idle, &runUUID, &empty
		completed = true
	case run.StatusCancelled:
		c.status, c.lastRun, c.pendingRun = Idle, &runUUID, &empty
		if notice == nil {
			n := string(run.ReasonCancelled)
			if from == Processing {
				// A running turn is cancelled only by a stop — the editor's,
				// whose own line this settling came first to, or the run's
				// cancel through the API: it reads as stopped.
				n = NoticeStopped
			}
			msgs = append(msgs, Message{Role: "assistant", Notice: n})
		}
	default:
		reason := failureCode(st)
		c.status, c.lastRun, c.pendingRun, c.err = Failed, &runUUID, &empty, &reason
		msgs = append(msgs, Message{Role: "assistant", Notice: reason})
	}
	now := micros(s.clk)
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		if record != nil {
			if err := record(ctx, tx); err != nil {
				return err
			}
		}
		msgs := msgs[:len(msgs):len(msgs)] // a transaction run again starts from the same messages
		if completed {
			if answer == "" && notice == nil && !r.Follows {
				// The reply kept with the run's end (KeepReplyTx): the
				// worker that finished the run may not be the one settling
				// it, and the run keeps no answer below privacy full. (A
				// run decided elsewhere shows its notice instead, as before.)
				var err error
				if answer, err = keptReply(ctx, tx, r.ID, runUUID); err != nil {
					return err
				}
			}
			if answer != "" || (notice == nil && !r.Follows) { // a followed run's answer the privacy level dropped is no message
				msgs = append(msgs, Message{Role: "assistant", Content: answer})
			}
		}
		won, err := applyTx(ctx, tx, r.ID, settleEvent(c.status, completed), from, c.guarded(r, from), now)
		if err != nil || !won {
			return err
		}
		if err := dropRepliesTx(ctx, tx, r.ID); err != nil {
			return err
		}
		for _, m := range msgs {
			if err := addMessageTx(ctx, tx, r.ID, m, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// settleCard returns what records the outcome of a decided card and what it
// does to open points (P.R2, P.C1, P.K1), from how the runtime answered the
// decided calls, inside the transaction it is given: the open points and the
// outcome are one transaction, so a failure between them cannot leave a skip
// recorded without its open point. Only a card with exactly one call and a
// target touches open points: an applied write closes them in any
// conversation, whatever its skill (P.C1); a skip records them only in a
// process conversation with a skill and a page. A key the open points refuse
// (openpoint.ErrInvalidKey, checked before any statement) records nothing
// and is logged; the conversation still takes the run's state.
//
// after, when not zero, is the message count the outcome is keyed by (the
// count at the decision's claim, job.After); zero counts the messages now.
func (s *settler) settleCard(r row, card Card, answer string, calls []agent.CallResult, mayRecord, recovery bool, after int64) func(ctx context.Context, tx *store.Tx) error {
	var target *tool.Target
	if len(card.Calls) == 1 {
		target = card.Calls[0].Target
	}
	o := Outcome{Run: card.RunUUID}
	if target != nil {
		o.Table, o.UID, o.Fields = target.Table, target.UID, append([]string{}, target.Fields...)
	}
	touches := target != nil && len(card.Calls) == 1 && s.points != nil
	eligible := touches && r.Process && r.Skill != 0 && r.Page != 0
	var tried int64 // the key an earlier attempt of this settlement recorded under
	return func(ctx context.Context, tx *store.Tx) error {
		err := s.settleCardTx(ctx, tx, settlement{row: r, target: target, outcome: o, answer: answer, card: card,
			calls: calls, touches: touches, eligible: eligible, mayRecord: mayRecord, recovery: recovery, after: after, tried: &tried})
		if errors.Is(err, errSettled) {
			return nil // recorded before: the job and a recovery both settled it
		}
		if errors.Is(err, openpoint.ErrInvalidKey) {
			s.log.Error("open points", "conversation", r.ID, "err", err)
			return nil
		}
		return err
	}
}

// settlement is what settleCardTx records for one decided card (
// a params struct instead of nine positional arguments).
type settlement struct {
	row     row
	target  *tool.Target // the card's one target; nil: none
	outcome Outcome      // the outcome so far: run and target
	answer  string
	card    Card
	calls   []agent.CallResult // how the runtime answered the decided calls
	// touches: the card touches open points; eligible: it may also record
	// and keep them (a process conversation with a skill and a page);
	// mayRecord: the continuation neither failed nor was cancelled (P.R4).
	touches, eligible, mayRecord bool
	// recovery: a settlement of a card whose decision's job was found lost;
	// it records the card only while the conversation is as it read it.
	recovery bool
	// after is the message count that keys the outcome (zero: counted in
	// the transaction).
	after int64
	// tried is the outcome key (after_message) an earlier attempt of this
	// settlement recorded under, 0 none; shared by its attempts.
	tried *int64
}

// settleCardTx records the outcome of a decided card in tx and, when this
// settlement is the one that recorded it, what the card does to open
// points; errSettled when the card was settled before.
func (s *settler) settleCardTx(ctx context.Context, tx *store.Tx, st settlement) error {
	r, target, o, answer, card, calls := st.row, st.target, st.outcome, st.answer, st.card, st.calls
	touches, eligible, mayRecord := st.touches, st.eligible, st.mayRecord
	if st.recovery {
		// Claim, then record: once another settlement moved the
		// conversation on since the recovery read it (the decision's job,
		// which recorded the card and went on with the chat), the messages
		// it added would give this record another key and the card would
		// count twice. The guarded no-op also holds the row (PostgreSQL)
		// until this transaction's compare-and-set.
		res, err := tx.Exec(ctx, "UPDATE conversations SET updated_at = updated_at WHERE id = ? AND status = ? AND updated_at = ?",
			r.ID, string(r.Status), r.UpdatedAt.UnixMicro())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			if err != nil {
				return err
			}
			return errSettled
		}
	}
	o.After = st.after
	if o.After == 0 {
		after, err := messageCount(ctx, tx, r.ID)
		if err != nil {
			return err
		}
		o.After = after
	}
	if st.tried != nil {
		// A retry after a commit reported failed that had landed (a
		// database that went away during the commit) counts the messages
		// that commit added, and would record the card again under another
		// key: the key the earlier attempt used says it is settled.
		if prev := *st.tried; prev != 0 && prev != o.After {
			var n int
			if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM conversation_outcomes WHERE conversation_id = ? AND run_uuid = ? AND after_message = ?",
				r.ID, o.Run, prev).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return errSettled
			}
		}
		*st.tried = o.After
	}
	var step *tool.WriteStep
	firstOK := false
	switch answer {
	case AnswerApply, AnswerApprove:
		step, firstOK = appliedWrite(card, calls)
		o.Outcome = outcomeOf(step, firstOK)
	case AnswerSkip:
		o.Outcome = OutcomeSkipped
	case AnswerKeep:
		o.Outcome = OutcomeKept
	case AnswerVariant:
		o.Outcome = OutcomeVariant
	default:
		o.Outcome = OutcomeNotApplied
	}
	// One card is settled once: the decision's job and a recovery that
	// found the job lost (settleDecided) both count the same messages —
	// nothing is added between the claim and the settlement — and the
	// outcome's key (migration 00016) lets the first in; the other records
	// nothing, open points neither. So the outcome goes first. On
	// PostgreSQL an insert that meets another transaction's uncommitted one
	// waits for its end, then records nothing or, after a rollback, itself.
	recorded, err := addOutcomeTx(ctx, tx, r.ID, o, micros(s.clk))
	if err != nil {
		return err
	}
	if !recorded {
		return errSettled
	}
	switch {
	case answer == AnswerApply || answer == AnswerApprove:
		if touches && step != nil {
			_, err = s.points.CloseAppliedTx(ctx, tx, openpoint.Target(*target), *step, firstOK)
		}
	case answer == AnswerSkip && eligible && mayRecord:
		err = s.points.RecordSkipTx(ctx, tx, r.Skill, r.Page, openpoint.Target(*target))
	case answer == AnswerKeep && eligible:
		_, err = s.points.CloseKeptTx(ctx, tx, openpoint.Target(*target))
	}
	return err
}

// errSettled: the card was settled before; this settlement records nothing.
var errSettled = errors.New("the card was settled before")

func outcomeOf(step *tool.WriteStep, firstOK bool) string {
	switch {
	case !firstOK || step == nil:
		return OutcomeNotApplied
	case step.Completeness == tool.Partial:
		return OutcomeNotApplied
	case step.Completeness != tool.Complete || step.HookFailedAfterWrite:
		return OutcomeCheck
	}
	return OutcomeApplied
}

// appliedWrite reads the approved write from how the runtime answered the
// decided calls (P.C1): the first call must be the approved one and must
// have succeeded; its write step states the completeness.
func appliedWrite(card Card, calls []agent.CallResult) (*tool.WriteStep, bool) {
	if len(card.Calls) == 0 || len(calls) == 0 || calls[0].ID != card.Calls[0].ID {
		return nil, false
	}
	return calls[0].Write, !calls[0].IsError
}

// fail marks the conversation failed after an error it cannot hand on.
func (s *settler) fail(ctx context.Context, r row, cause error) {
	s.log.Warn("chat turn failed", "conversation", r.ID, "err", cause)
	code := "failed"
	switch {
	case errors.Is(cause, agent.ErrConfiguration):
		code = "configuration_not_found"
	case errors.Is(cause, agent.ErrTooManyRuns):
		code = "too_many_runs" // the user's cap of open runs
	}
	err := persist(ctx, s.log, "fail", func() error {
		return s.db.InTx(ctx, func(tx *store.Tx) error {
			won, err := applyTx(ctx, tx, r.ID, evFail, Processing, change{err: &code}.guarded(r, Processing), micros(s.clk))
			if err != nil || !won {
				return err
			}
			return addMessageTx(ctx, tx, r.ID, Message{Role: "assistant", Notice: code}, micros(s.clk))
		})
	})
	if err != nil {
		s.log.Error("fail conversation", "conversation", r.ID, "err", err)
	}
}

// unclaim gives back a claim that changed nothing: the conversation waits
// for the decision r read, as before.
func (s *settler) unclaim(ctx context.Context, r row) {
	c := change{status: r.Status, card: &r.Card, question: &r.Question, err: &r.Error}
	ctx = context.WithoutCancel(ctx)
	if err := persist(ctx, s.log, "unclaim", func() error {
		_, err := applyTx(ctx, s.db, r.ID, evUnclaim, Processing, c, micros(s.clk))
		return err
	}); err != nil {
		s.log.Error("unclaim", "conversation", r.ID, "run", r.PendingRun, "err", err)
	}
}

// follow lets go of a claim whose run is in a state the caller cannot tell:
// the conversation follows the run, and the next read takes its state.
func (s *settler) follow(ctx context.Context, r row) {
	ctx = context.WithoutCancel(ctx)
	if err := persist(ctx, s.log, "follow", func() error {
		_, err := applyTx(ctx, s.db, r.ID, evFollow, Processing, change{follows: true}, micros(s.clk))
		return err
	}); err != nil {
		s.log.Error("follow run", "conversation", r.ID, "run", r.PendingRun, "err", err)
	}
}

// release lets go of the claim a message or an end-tour took by withdrawing
// r's waiting run, when the request fails after it: the conversation takes
// the withdrawn run's state (idle after the cancel) (a
// failure never leaves a conversation stuck).
func (s *settler) release(ctx context.Context, r row) {
	s.apply(context.WithoutCancel(ctx), r.ID, time.Time{}, r.PendingRun, "") // the claim's own time is not r's
}

// cardOf builds the card the server offers for a waiting run: the process
// answers where the runtime offers the reasons (a process run's one pending
// write call), approve/cancel for every other card.
func (s *settler) cardOf(r row, st agent.Status) *Card {
	p := st.Pending
	c := &Card{RunUUID: st.UUID, TurnDigest: p.TurnDigest, ApproveBlocked: p.ApproveBlocked, Calls: []CardCall{}}
	applicable := true
	for _, call := range p.Calls {
		c.Calls = append(c.Calls, CardCall{ID: call.ID, Tool: call.Tool, DeclaresWrite: call.DeclaresWrite, Target: call.Target,
			Heading: call.Heading, Preview: call.Preview, PreviewError: call.PreviewError, Landing: call.Landing})
		if call.PreviewError != "" {
			applicable = false // an invalid or injected call: nothing to apply
		}
	}
	if p.Answers == "process" { // the runtime's answer set: a reason it does not offer is a plain denial
		c.Answers = []string{AnswerApply, AnswerVariant, AnswerSkip, AnswerKeep}
	} else {
		c.Answers = []string{AnswerApprove, AnswerCancel}
	}
	if !applicable {
		c.Answers = c.Answers[1:] // apply and approve come first
	}
	return c
}

// questionOf is the question a run waits for, with the options and the
// free-text flag read from the answer's schema (tool.InputSchema).
func questionOf(st agent.Status) *Question {
	p := st.Pending
	if p == nil || p.Kind != "input" {
		return nil
	}
	q := &Question{TurnDigest: p.TurnDigest, Question: p.Question, Options: []string{}}
	q.Schema, _ = json.Marshal(p.Schema)
	var schema struct {
		Properties struct {
			Choice struct {
				Enum []string `json:"enum"`
			} `json:"choice"`
			Text *json.RawMessage `json:"text"`
		} `json:"properties"`
	}
	if json.Unmarshal(q.Schema, &schema) == nil {
		q.Options = append(q.Options, schema.Properties.Choice.Enum...)
		q.FreeText = schema.Properties.Text != nil
	}
	return q
}

func jsonOf(m map[string]any) *json.RawMessage {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	raw := json.RawMessage(b)
	return &raw
}
