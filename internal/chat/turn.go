package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"waymark/internal/access"
	"waymark/internal/agent"
	"waymark/internal/clock"
	"waymark/internal/content"
	"waymark/internal/llm"
	"waymark/internal/store"
)

// turns owns a conversation's turns: a message sent and claimed (Send), the
// turn job that runs it on the runtime with the page's context (turn), and
// the run's result applied to the conversation (apply, settleRun) — its
// reply, card, question or failure.
type turns struct {
	db     *store.DB
	rt     turnRunner
	clk    clock.Clock
	log    *slog.Logger
	src    content.Source
	dir    access.Directory
	points PointKeeper // may be nil: no open points in the prompt
	// requeueable: turns run on the queue, where a run can be rebuilt from
	// its request (agent.Request.Requeueable).
	requeueable bool

	jobs     committer
	recovery reconciler
	settle   *settler
	test     TestConfig
}

// turnRunner is what a turn needs of the runtime: a run begun, a waiting
// run withdrawn, a run's state.
type turnRunner interface {
	Run(ctx context.Context, actor int64, req agent.Request) (agent.Result, error)
	CancelIfWaiting(ctx context.Context, actor int64, id string) (bool, error)
	Status(ctx context.Context, actor int64, id string) (agent.Status, error)
}

// reconciler brings a conversation up to date with its run before a
// request acts on it (recovery.reconcile).
type reconciler interface {
	reconcile(ctx context.Context, r row) (row, error)
}

func newTurns(db *store.DB, rt turnRunner, clk clock.Clock, log *slog.Logger, src content.Source, dir access.Directory,
	points PointKeeper, requeueable bool, jobs committer, recovery reconciler, settle *settler, test TestConfig) *turns {
	return &turns{db: db, rt: rt, clk: clk, log: log, src: src, dir: dir, points: points, requeueable: requeueable,
		jobs: jobs, recovery: recovery, settle: settle, test: test}
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
	r, err := owned(ctx, s.db, actor, id)
	if err != nil {
		return err
	}
	if r, err = s.recovery.reconcile(ctx, r); err != nil {
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
		s.test.beforeClaim("message")
		if r, err = s.withdraw(ctx, r); err != nil {
			return err
		}
		withdrawn = r.Status == Processing // else handed back after a run that ended
		if r.Status == AwaitingApproval || r.Status == AwaitingInput {
			return ErrBusy // another decision waits since (read after the hand-back): no send leaves from it
		}
	default:
		s.test.beforeClaim("message")
	}
	from, now := r.Status, micros(s.clk)
	empty := ""
	won, err := s.jobs.commit(ctx, &job{Op: opTurn, Conversation: r.ID, At: now}, func(tx *store.Tx) (bool, error) {
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
			s.settle.release(ctx, r)
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
	won, err := applyTx(ctx, s.db, r.ID, evWithdraw, r.Status, change{seen: &r.card}, micros(s.clk))
	if err != nil {
		return row{}, err
	}
	if !won {
		return row{}, ErrBusy
	}
	cancelled, err := s.rt.CancelIfWaiting(ctx, r.Owner, r.PendingRun)
	if err != nil {
		s.settle.unclaim(ctx, r) // nothing was cancelled: the decision waits as before
		return row{}, err
	}
	if cancelled {
		claimed := r
		claimed.Status, claimed.LastRun = Processing, r.PendingRun // the withdrawn run is the next turn's predecessor
		return claimed, nil
	}
	st, err := s.rt.Status(ctx, r.Owner, r.PendingRun)
	if err != nil {
		s.settle.follow(ctx, r)
		return row{}, err
	}
	if err := s.settle.handOver(ctx, r, Processing, st); err != nil {
		return row{}, err
	}
	if !st.Status.Terminal() {
		return row{}, ErrBusy // released elsewhere: it runs now
	}
	return getRow(ctx, s.db, r.ID)
}

// turn runs one turn of conversation r, claimed at, and applies its result.
// It returns an error only when the job was cancelled (its process stopped
// past the soft-stop time) before the turn's run began: nothing of it ran,
// and the queue gives the job to a worker again at once, instead of the
// turn being failed or waiting a lease to be found lost.
func (s *turns) turn(ctx context.Context, r row, at int64) error {
	var msgs []Message
	err := outlast(ctx, s.log, "read transcript", func() (err error) {
		msgs, err = messages(ctx, s.db, r.ID)
		return err
	})
	if err != nil && (ctx.Err() != nil || store.Unreachable(err)) {
		return err // the job is tried again: an unreachable database fails no conversation
	}
	if err != nil {
		s.settle.fail(ctx, r, err)
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
	req.Requeueable = s.requeueable
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
		s.settle.fail(ctx, r, err)
		return nil
	}
	s.settle.apply(ctx, r.ID, time.UnixMicro(at), res.UUID, res.Answer)
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
	s.test.beforeClaim("result")
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
		s.settle.apply(ctx, t.id, time.UnixMicro(t.at), res.UUID, res.Answer)
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
	record, err := s.settle.settleDecided(ctx, r, st)
	if err != nil || record == nil {
		return // the decision did not reach the run (or cannot be read): the job, or the recovery, settles it
	}
	s.settle.applyWith(ctx, r.ID, r.UpdatedAt, res.UUID, res.Answer, &st, record)
}
