package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"waymark/internal/access"
	"waymark/internal/agent"
	"waymark/internal/catalog"
	"waymark/internal/fault"
	"waymark/internal/openpoint"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/tool"
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

// labels are the editor's words for each answer (the transcript shows them).
var labels = map[string]string{
	AnswerApply: "Übernehmen", AnswerVariant: "Andere Variante", AnswerSkip: "Überspringen", AnswerKeep: "Behalten",
	AnswerApprove: "Freigeben", AnswerCancel: "Ablehnen",
}

// decisions owns the answers to a conversation's cards and questions: the
// answer claimed with its job (Answer, AnswerQuestion), the decision handed
// to the runtime (decide, submit), the card's outcome and open points
// settled with the run's state (settleCard), and a refused one handed back.
type decisions struct {
	*base
	*turns
	*recovery

	dir    access.Directory
	points PointKeeper
}

// Answer records the editor's answer to the waiting card and the job that
// hands the decision to the runtime (202). The server decides which
// answers a card has: a reason sent for a card that does not offer it is a
// plain denial (P.R5). On a four-eyes card the approval is blocked; the
// denials still work.
func (s *decisions) Answer(ctx context.Context, actor, id int64, digest, answer string) error {
	return s.AnswerWith(ctx, actor, id, digest, answer, AnswerOptions{})
}

// MaxInstruction is the longest instruction of a variant, in characters:
// the runtime's, which the variant's denial passes through.
const MaxInstruction = agent.MaxInstruction

// AnswerOptions are the optional parts of an answer to a card.
type AnswerOptions struct {
	// Instruction is the editor's wish for the variant ("kürzer", "mit dem
	// Ortsnamen"): the model receives it with the variant's denial. Only a
	// variant takes one; at most MaxInstruction characters.
	Instruction string
}

// AnswerWith is Answer with o. Bad options are refused before anything
// changes. A variant the card does not offer is a plain denial, and its
// instruction goes with the variant.
func (s *decisions) AnswerWith(ctx context.Context, actor, id int64, digest, answer string, o AnswerOptions) error {
	if _, ok := labels[answer]; !ok {
		return fmt.Errorf("%w: answer: want apply, variant, skip, keep, approve or cancel", ErrInvalid)
	}
	if err := store.CheckText(o.Instruction); err != nil {
		return store.ErrInvalidText.With("instruction: %w", err)
	}
	if utf8.RuneCountInString(o.Instruction) > MaxInstruction {
		return fmt.Errorf("%w: instruction: at most %d characters", ErrInvalid, MaxInstruction)
	}
	if o.Instruction != "" && answer != AnswerVariant {
		return fmt.Errorf("%w: instruction: only a variant takes one", ErrInvalid)
	}
	ctx, end := s.db.SettingsScope(ctx) // the card's check and the answer's text read the editor once
	defer end()
	r, err := s.owned(ctx, actor, id)
	if err != nil {
		return err
	}
	if r, err = s.reconcile(ctx, r); err != nil {
		return err
	}
	if r.Status != AwaitingApproval || r.Card == nil || digest != r.Card.TurnDigest {
		return ErrStaleCard
	}
	approve := answer == AnswerApply || answer == AnswerApprove
	if approve && !r.Card.ofKind(answer) {
		// Apply on a plain approve/cancel card, approve on a process card:
		// an option this card never offers (400), not a proposal that
		// cannot be applied.
		return fmt.Errorf("%w: answer: %s is not an answer of this card; it offers %s", ErrInvalid, answer, strings.Join(r.Card.Answers, ", "))
	}
	if approve && r.Card.ApproveBlocked != "" {
		return ErrNotOffered
	}
	if approve && !r.Card.offers(answer) {
		return ErrCannotApply // the card's call has a preview error
	}
	if !approve && !r.Card.offers(answer) {
		answer, o.Instruction = AnswerCancel, "" // a reason the card does not offer is a plain denial
	}
	said := s.answerText(ctx, actor, answer)
	if o.Instruction != "" {
		said += ": " + o.Instruction // the transcript shows the wish the model receives
	}
	s.beforeClaim("answer")
	return s.claimDecision(ctx, r, said, job{Op: opDecide, Answer: answer, Instruction: o.Instruction})
}

// claimDecision takes the decision r waits for (awaiting → processing, only
// while the conversation still shows the card or question r read) and adds
// the editor's answer to the transcript and j, the job that carries the
// decision out, in one transaction. A claim lost to another answer, a
// message or an end changes nothing: ErrStaleCard.
func (s *decisions) claimDecision(ctx context.Context, r row, said string, j job) error {
	now := s.now()
	j.Conversation, j.At, j.From, j.Decision, j.Run = r.ID, now, r.Status, r.card, r.PendingRun
	won, err := s.commit(ctx, &j, func(tx *store.Tx) (bool, error) {
		// A card's claim keeps the card (row.Decided): a decision the runtime
		// accepted is settled even when the job that took it is lost. A
		// question's claim keeps the question (row.Answered): an answer whose
		// job is lost before it reached the run is handed to the workers again.
		won, err := applyTx(ctx, tx, r.ID, evClaimAnswer, r.Status, change{seen: &r.card, keepCard: true}, now)
		if err != nil || !won {
			return won, err
		}
		if err := addMessageTx(ctx, tx, r.ID, Message{Role: "user", Content: said}, now); err != nil {
			return false, err
		}
		j.After, err = messageCount(ctx, tx, r.ID) // the count the card's outcome is keyed by
		return err == nil, err
	})
	if err != nil {
		return err
	}
	if !won {
		return ErrStaleCard
	}
	return nil
}

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
		_ = s.persist(ctx, "decided run's state", func() error {
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
	s.applyWith(ctx, r.ID, r.UpdatedAt, card.RunUUID, res.Answer, res.Status, s.settleCard(r, card, answer, res.Calls, mayRecord, false, after))
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
	record, err := s.settleDecidedCard(ctx, claimed, &card, st)
	if err != nil || record == nil {
		return false
	}
	s.applyWith(ctx, r.ID, r.UpdatedAt, card.RunUUID, st.Answer, &st, record)
	return true
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
	since := time.Now()
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
func (s *decisions) settleCard(r row, card Card, answer string, calls []agent.CallResult, mayRecord, recovery bool, after int64) func(ctx context.Context, tx *store.Tx) error {
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

// settleDecided settles the card conversation r was carrying out when its
// decision's job is gone — the worker died after the runtime accepted the
// decision, or a retried job found the run no longer waiting (ADR-022 P.R2,
// P.R4;) — once the run paused or ended (st). The
// run's events say what the runtime accepted: the approval event with the
// card's turn digest (none: the decision never reached the runtime, nothing
// to settle), the continuation's end (failed or cancelled: nothing
// recorded), and for an applied card the write step the write recorded
// (tool_write, stored at every privacy level; none: not applied).
//
// It returns what records the card inside the transaction that gives the
// conversation the run's state (applyWith), or nil when there is nothing to
// record.
func (s *decisions) settleDecided(ctx context.Context, r row, st agent.Status) (func(ctx context.Context, tx *store.Tx) error, error) {
	return s.settleDecidedCard(ctx, r, r.Decided, st)
}

// settleDecidedCard is settleDecided for card, the editor's own decided
// card or one decided elsewhere (handOver).
func (s *decisions) settleDecidedCard(ctx context.Context, r row, card *Card, st agent.Status) (func(ctx context.Context, tx *store.Tx) error, error) {
	if card == nil || !(st.Status.Terminal() || st.Status.Waiting()) {
		return nil, nil
	}
	evs, err := s.rt.Events(ctx, r.Owner, card.RunUUID, 0, 0)
	if err != nil {
		return nil, err
	}
	at := -1
	var answer string
	for i, e := range evs {
		var p struct {
			Approved       *bool  `json:"approved"`
			Reason         string `json:"reason"`
			TurnDigest     string `json:"turnDigest"`
			PreviewChanged bool   `json:"previewChanged"`
		}
		if e.Kind != run.EventApproval || json.Unmarshal(e.Payload, &p) != nil || p.Approved == nil ||
			p.PreviewChanged || p.TurnDigest != card.TurnDigest {
			continue
		}
		at, answer = i, answerOf(*p.Approved, agent.DenyReason(p.Reason))
		break
	}
	if at < 0 {
		return nil, nil
	}
	mayRecord := true
	var calls []agent.CallResult
	for _, e := range evs[at+1:] {
		var p struct {
			Status string `json:"status"`
		}
		if e.Kind == run.EventStatus && json.Unmarshal(e.Payload, &p) == nil && p.Status != string(run.StatusRunning) {
			mayRecord = p.Status != string(run.StatusFailed) && p.Status != string(run.StatusCancelled)
			break
		}
		if e.Kind == run.EventToolWrite && len(calls) == 0 && len(card.Calls) > 0 {
			var w tool.WriteStep
			if json.Unmarshal(e.Payload, &w) == nil {
				calls = append(calls, agent.CallResult{ID: card.Calls[0].ID, Tool: card.Calls[0].Tool, Write: &w})
			}
		}
	}
	if len(calls) == 0 && len(card.Calls) > 0 {
		calls = []agent.CallResult{{ID: card.Calls[0].ID, Tool: card.Calls[0].Tool, IsError: true}}
	}
	return s.settleCard(r, *card, answer, calls, mayRecord, true, 0), nil
}

// answerOf is the card answer an approval event records.
func answerOf(approved bool, reason agent.DenyReason) string {
	switch {
	case approved:
		return AnswerApply
	case reason == agent.DenyVariant:
		return AnswerVariant
	case reason == agent.DenySkip:
		return AnswerSkip
	case reason == agent.DenyKeep:
		return AnswerKeep
	}
	return AnswerCancel
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
func (s *decisions) settleCardTx(ctx context.Context, tx *store.Tx, st settlement) error {
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
	recorded, err := addOutcomeTx(ctx, tx, r.ID, o, s.now())
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
		s.unclaim(ctx, r) // the card (or question) waits as before
		return
	case !waitsFor(r, st) && (st.Status.Waiting() || !st.Status.Terminal() || errors.Is(cause, agent.ErrNotWaiting)):
		err = s.handOver(ctx, r, Processing, st)
	case !waitsFor(r, st):
		err = s.settleRun(ctx, r, Processing, st, st.Answer, nil)
	default:
		c := change{status: r.Status, err: &code}
		if r.Status == AwaitingInput {
			q := questionOf(st)
			c.question = &q
		} else {
			nc := s.cardOf(r, st)
			c.card = &nc
		}
		now := s.now()
		err = s.persist(ctx, "hand back", func() error {
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

// answerText is the editor's answer as the transcript shows it: the card's
// button label in the editor's backend language (the UI's catalogue).
func (s *decisions) answerText(ctx context.Context, actor int64, answer string) string {
	lang := ""
	if a, err := access.LoadActor(ctx, s.dir, s.db, actor); err == nil {
		lang = a.BackendLanguage
	}
	return catalog.For(lang).Get("answer." + answer)
}
