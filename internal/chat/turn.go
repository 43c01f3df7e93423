package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"waymark/internal/access"
	"waymark/internal/agent"
	"waymark/internal/content"
	"waymark/internal/llm"
	"waymark/internal/run"
	"waymark/internal/store"
)

// turns owns a conversation's turns: a message sent and claimed (Send), the
// turn job that runs it on the runtime with the page's context (turn), and
// the run's result applied to the conversation (apply, settleRun) — its
// reply, card, question or failure.
type turns struct {
	*base
	*decisions
	*recovery

	src    content.Source
	dir    access.Directory
	points PointKeeper
}

// Send adds the editor's message and, in the same transaction, the job of
// its turn (202); a chat worker of any process runs the turn. A message while
// a turn is queued or running is ErrBusy. A message while a process run
// waits for a card or a question withdraws it (P.X2): the message claims the
// conversation first (compare-and-set on the decision it read), then cancels
// the run (cancelIfWaiting); a message that loses the claim changes nothing
// (ErrBusy). If the cancel lost because the run was decided elsewhere, the
// decision is handed back: the message lands after a run that already ended,
// and is refused as busy while the run still runs. An ordinary conversation
// leaves its run waiting and refuses the message as busy. A withdrawn
// proposal records no open point.
func (s *turns) Send(ctx context.Context, actor, id int64, text string) error {
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
	withdrawn := false
	waiting := r.Card // the card a message withdraws, for its trace
	switch r.Status {
	case Processing:
		return ErrBusy
	case AwaitingApproval, AwaitingInput:
		if !r.Process {
			return ErrBusy
		}
		s.beforeClaim("message")
		if r, err = s.withdraw(ctx, r); err != nil {
			return err
		}
		withdrawn = r.Status == Processing // else handed back after a run that ended
		if r.Status == AwaitingApproval || r.Status == AwaitingInput {
			return ErrBusy // another decision waits since (read after the hand-back): no send leaves from it
		}
	default:
		s.beforeClaim("message")
	}
	from, now := r.Status, s.now()
	empty := ""
	won, err := s.commit(ctx, &job{Op: opTurn, Conversation: r.ID, At: now}, func(tx *store.Tx) (bool, error) {
		won, err := applyTx(ctx, tx, r.ID, evSend, from, change{lastRun: &r.LastRun, pendingRun: &empty}, now)
		if err != nil || !won {
			return won, err
		}
		if withdrawn && waiting != nil {
			// The transcript keeps a trace of the proposal the message
			// withdrew (identities only), and the next turn is told of it.
			if err := addMessageTx(ctx, tx, r.ID, Message{Role: "assistant", Notice: withdrawnNotice(*waiting)}, now); err != nil {
				return false, err
			}
		}
		return true, addMessageTx(ctx, tx, r.ID, Message{Role: "user", Content: text}, now)
	})
	if err != nil {
		if withdrawn {
			// The run is cancelled but the message and its turn did not
			// commit: the conversation takes the cancelled run's state, not
			// processing with no job to move it on.
			s.release(ctx, r)
		}
		return err
	}
	if !won {
		return ErrBusy
	}
	return nil
}

// withdraw takes the waiting run of r away for a new message: it claims the
// conversation (awaiting → processing, only while it still shows the decision
// r read), then cancels the run. It answers the conversation the message
// lands on: processing with the withdrawn run as the next turn's
// predecessor, or — the cancel lost to a decision taken elsewhere on a run
// that ended — as handed back. ErrBusy when the claim lost (nothing
// changed) or the run decided elsewhere still runs.
func (s *turns) withdraw(ctx context.Context, r row) (row, error) {
	won, err := applyTx(ctx, s.db, r.ID, evWithdraw, r.Status, change{seen: &r.card}, s.now())
	if err != nil {
		return row{}, err
	}
	if !won {
		return row{}, ErrBusy
	}
	cancelled, err := s.rt.CancelIfWaiting(ctx, r.Owner, r.PendingRun)
	if err != nil {
		s.unclaim(ctx, r) // nothing was cancelled: the decision waits as before
		return row{}, err
	}
	if cancelled {
		claimed := r
		claimed.Status, claimed.LastRun = Processing, r.PendingRun // the withdrawn run is the next turn's predecessor
		return claimed, nil
	}
	st, err := s.rt.Status(ctx, r.Owner, r.PendingRun)
	if err != nil {
		s.follow(ctx, r)
		return row{}, err
	}
	if err := s.handOver(ctx, r, Processing, st); err != nil {
		return row{}, err
	}
	if !st.Status.Terminal() {
		return row{}, ErrBusy // released elsewhere: it runs now
	}
	return getRow(ctx, s.db, r.ID)
}

// unclaim gives back a claim that changed nothing: the conversation waits
// for the decision r read, as before.
func (s *turns) unclaim(ctx context.Context, r row) {
	c := change{status: r.Status, card: &r.Card, question: &r.Question, err: &r.Error}
	ctx = context.WithoutCancel(ctx)
	if err := s.persist(ctx, "unclaim", func() error {
		_, err := applyTx(ctx, s.db, r.ID, evUnclaim, Processing, c, s.now())
		return err
	}); err != nil {
		s.log.Error("unclaim", "conversation", r.ID, "run", r.PendingRun, "err", err)
	}
}

// follow lets go of a claim whose run is in a state the caller cannot tell:
// the conversation follows the run, and the next read takes its state.
func (s *turns) follow(ctx context.Context, r row) {
	ctx = context.WithoutCancel(ctx)
	if err := s.persist(ctx, "follow", func() error {
		_, err := applyTx(ctx, s.db, r.ID, evFollow, Processing, change{follows: true}, s.now())
		return err
	}); err != nil {
		s.log.Error("follow run", "conversation", r.ID, "run", r.PendingRun, "err", err)
	}
}

// turn runs one turn of conversation r, claimed at, and applies its result.
// It returns an error only when the job was cancelled (its process stopped
// past the soft-stop time) before the turn's run began: nothing of it ran,
// and the queue gives the job to a worker again at once, instead of the
// turn being failed or waiting a lease to be found lost.
func (s *turns) turn(ctx context.Context, r row, at int64) error {
	var msgs []Message
	err := s.outlast(ctx, "read transcript", func() (err error) {
		msgs, err = messages(ctx, s.db, r.ID)
		return err
	})
	if err != nil && (ctx.Err() != nil || store.Unreachable(err)) {
		return err // the job is tried again: an unreachable database fails no conversation
	}
	if err != nil {
		s.fail(ctx, r, err)
		return nil
	}
	req := agent.Request{Configuration: r.Configuration, Language: r.Language, Messages: transcript(msgs)}
	switch {
	case r.LastRun != "":
		req.Predecessor = r.LastRun // every later turn names only its predecessor
	case r.Process:
		req.Invocation = &agent.Invocation{Skill: r.Skill, Subject: &content.Ref{Table: "pages", UID: r.Page, Language: r.Language}}
	}
	// The conversation's page in every turn (free and four-eyes chats
	// included), then the open points of this skill on this page (P.O1).
	req.Context = s.pageContext(ctx, r) + withdrawnContext(msgs)
	if points := s.pointsPrompt(ctx, r); points != "" {
		req.Context += "\n\n" + points
	}
	// The run and the conversation's pending run commit together, only while
	// the claim holds: a conversation released as lost keeps its state, and
	// no run exists that its conversation does not name. A job worked again
	// after its process stopped finds the run the first attempt began (the
	// reaper requeues that one) and starts none.
	req.StartTx = func(ctx context.Context, tx *store.Tx, uuid string) error {
		res, err := tx.Exec(ctx, "UPDATE conversations SET pending_run_uuid = ? WHERE id = ? AND status = ? AND updated_at = ? AND pending_run_uuid = ''",
			uuid, r.ID, string(Processing), at)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return errClaimLost
		}
		return nil
	}
	// On the queue the turn's run can be rebuilt from its request: a worker
	// that stops mid-turn has it requeued, not failed.
	req.Requeueable = s.queue != nil
	res, err := s.rt.Run(ctx, r.Owner, req)
	if errors.Is(err, errClaimLost) {
		s.log.Info("turn not started: the conversation's claim no longer holds", "conversation", r.ID)
		return nil
	}
	if err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled) || store.Unreachable(err)) {
		// The job or the runtime was stopped, or the database could not be
		// reached, before the run began: the job is tried again (and a turn
		// lost so is started again by the reaper), the conversation is not
		// failed for it.
		return err
	}
	if err != nil {
		s.fail(ctx, r, err)
		return nil
	}
	s.apply(ctx, r.ID, time.UnixMicro(at), res.UUID, res.Answer)
	return nil
}

// errClaimLost: the conversation was released or moved on before the turn's run began.
var errClaimLost = errors.New("the conversation's claim no longer holds")

// transcript is the conversation as model messages: users and answers. A
// line with a notice is the transcript's own (a stopped reply's part): the
// model never reads it.
func transcript(msgs []Message) []llm.Message {
	var out []llm.Message
	for _, m := range msgs {
		if (m.Role == "user" || m.Role == "assistant") && m.Notice == "" && strings.TrimSpace(m.Content) != "" {
			out = append(out, llm.Message{Role: m.Role, Content: m.Content})
		}
	}
	return out
}

// QueuedResult takes the result of a queued run's segment (the runtime's
// Config.QueuedResult, on the worker that ran it): when it is the turn of
// a conversation still processing it — a turn the reaper requeued after its
// worker stopped — the conversation takes its state and
// answer at once. A conversation carrying out a decided card on the run
// (its claim keeps the card) takes it too once the runtime accepted the
// decision and the run went past it — a continuation its decision's worker
// died in and another worker finished: the card is settled from the run's
// events with the run's state and answer, in one transaction (the job that
// would have settled it died with its worker, and the recovery a lease
// later lost the reply). A decision the run still waits for is its job's
// to carry out: the result changes nothing then. Any other run changes
// nothing.
func (s *turns) QueuedResult(ctx context.Context, res agent.Result) {
	s.beforeClaim("result")
	type turn struct {
		id, at int64
		card   string
	}
	turns, err := store.Collect(ctx, s.db, func(sc store.Scanner) (turn, error) {
		var t turn
		return t, sc.Scan(&t.id, &t.at, &t.card)
	}, "SELECT id, updated_at, card FROM conversations WHERE pending_run_uuid = ? AND status = ?", res.UUID, string(Processing))
	if err != nil {
		s.log.Error("requeued turn's conversation", "run", res.UUID, "err", err)
		return
	}
	for _, t := range turns {
		if t.card != "" {
			s.decidedResult(ctx, t.id, res)
			continue
		}
		s.apply(ctx, t.id, time.UnixMicro(t.at), res.UUID, res.Answer)
	}
}

// decidedResult settles conversation id, processing a decided card on run
// res.UUID, from res once the runtime accepted the decision and the run
// paused on another card or ended (QueuedResult).
func (s *turns) decidedResult(ctx context.Context, id int64, res agent.Result) {
	r, err := getRow(ctx, s.db, id)
	if err != nil || r.Status != Processing || r.Decided == nil || r.Follows || r.PendingRun != res.UUID {
		return // moved on, or no decided card of its own: its job or a read settles it
	}
	st, err := s.rt.Status(ctx, r.Owner, res.UUID)
	if err != nil || !(st.Status.Terminal() || st.Status.Waiting()) ||
		(st.Status.Waiting() && st.Pending != nil && st.Pending.TurnDigest == r.Decided.TurnDigest) {
		return
	}
	record, err := s.settleDecided(ctx, r, st)
	if err != nil || record == nil {
		return // the decision did not reach the run (or cannot be read): the job, or the recovery, settles it
	}
	s.applyWith(ctx, r.ID, r.UpdatedAt, res.UUID, res.Answer, &st, record)
}

// apply maps the state of the conversation's own run onto it while it is
// still processing as it was at at (its updated_at then; zero: as it is
// now), retrying after a store error (persist); a state it cannot read even
// so fails the conversation rather than leave it processing.
func (s *turns) apply(ctx context.Context, id int64, at time.Time, runUUID, answer string) {
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
func (s *turns) applyWith(ctx context.Context, id int64, at time.Time, runUUID, answer string, known *agent.Status, record func(ctx context.Context, tx *store.Tx) error) {
	ctx = context.WithoutCancel(ctx)
	var r row
	unsettled := false
	err := s.persist(ctx, "apply run", func() error {
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
func (s *turns) settleRun(ctx context.Context, r row, from Status, st agent.Status, answer string, notice *Message) error {
	return s.settleRunWith(ctx, r, from, st, answer, notice, nil)
}

// settleRunWith is settleRun that also runs record, when set, in its
// transaction before the compare-and-set (applyWith).
func (s *turns) settleRunWith(ctx context.Context, r row, from Status, st agent.Status, answer string, notice *Message,
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
	now := s.now()
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

// fail marks the conversation failed after an error it cannot hand on.
func (s *turns) fail(ctx context.Context, r row, cause error) {
	s.log.Warn("chat turn failed", "conversation", r.ID, "err", cause)
	code := "failed"
	switch {
	case errors.Is(cause, agent.ErrConfiguration):
		code = "configuration_not_found"
	case errors.Is(cause, agent.ErrTooManyRuns):
		code = "too_many_runs" // the user's cap of open runs
	}
	err := s.persist(ctx, "fail", func() error {
		return s.db.InTx(ctx, func(tx *store.Tx) error {
			won, err := applyTx(ctx, tx, r.ID, evFail, Processing, change{err: &code}.guarded(r, Processing), s.now())
			if err != nil || !won {
				return err
			}
			return addMessageTx(ctx, tx, r.ID, Message{Role: "assistant", Notice: code}, s.now())
		})
	})
	if err != nil {
		s.log.Error("fail conversation", "conversation", r.ID, "err", err)
	}
}

// cardOf builds the card the server offers for a waiting run: the process
// answers where the runtime offers the reasons (a process run's one pending
// write call), approve/cancel for every other card.
func (s *turns) cardOf(r row, st agent.Status) *Card {
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

// release lets go of the claim a message or an end-tour took by withdrawing
// r's waiting run, when the request fails after it: the conversation takes
// the withdrawn run's state (idle after the cancel) (a
// failure never leaves a conversation stuck).
func (s *turns) release(ctx context.Context, r row) {
	s.apply(context.WithoutCancel(ctx), r.ID, time.Time{}, r.PendingRun, "") // the claim's own time is not r's
}
