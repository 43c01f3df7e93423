package chat

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"waymark/internal/agent"
	"waymark/internal/clock"
	"waymark/internal/run"
	"waymark/internal/store"
)

// recovery owns what moves a conversation on when its request or worker did
// not: a decision taken elsewhere handed back (reconcile), a turn, decision
// or end-tour whose worker stopped restarted, rescued or finished
// (recoverInterrupted), and the reaper's pass over them (Reap).
type recovery struct {
	db    *store.DB
	rt    runWaits
	clk   clock.Clock
	log   *slog.Logger
	queue Queue         // may be nil: no job to wait for, rescue or restart
	lease time.Duration // the runtime's lease (Deps.Lease)

	jobs   committer
	settle *settler
	tours  tourFinisher
}

// runWaits is what recovery needs of the runtime: whether a run still
// waits for a decision, and its state.
type runWaits interface {
	WaitsFor(ctx context.Context, actor int64, id, digest string) (bool, error)
	Status(ctx context.Context, actor int64, id string) (agent.Status, error)
}

// tourFinisher carries out an end-tour whose request stopped (tours).
type tourFinisher interface {
	finishEndTour(ctx context.Context, r row)
}

func newRecovery(db *store.DB, rt runWaits, clk clock.Clock, log *slog.Logger, queue Queue, lease time.Duration,
	jobs committer, settle *settler, tours tourFinisher) *recovery {
	return &recovery{db: db, rt: rt, clk: clk, log: log, queue: queue, lease: lease, jobs: jobs, settle: settle, tours: tours}
}

var _ reconciler = (*recovery)(nil)

// reconcile brings a conversation up to date with a run it does not drive:
//   - awaiting a decision whose run no longer waits for it — approved,
//     denied, answered, cancelled or ended in the inbox or through the runs
//     API — the decision is handed back at once (handOver), with a notice
//     that says what happened;
//   - processing while it follows such a run, it takes the run's state as
//     soon as the run pauses or ends;
//   - processing a turn of its own that was interrupted, recoverInterrupted.
func (s *recovery) reconcile(ctx context.Context, r row) (row, error) {
	switch {
	case r.Status == Processing && r.Follows:
		st, err := s.rt.Status(ctx, r.Owner, r.PendingRun)
		if err != nil || !(st.Status.Terminal() || st.Status.Waiting()) {
			return r, nil
		}
		record, err := s.settle.settleDecided(ctx, r, st) // a card decided elsewhere, kept while the run went on
		if err != nil {
			s.log.Error("settle card decided elsewhere", "conversation", r.ID, "run", r.PendingRun, "err", err)
		}
		if err := s.settle.settleRunWith(ctx, r, Processing, st, st.Answer, nil, record); err != nil {
			return r, err
		}
		return getRow(ctx, s.db, r.ID)
	case r.Status == Processing:
		return s.recoverInterrupted(ctx, r)
	case (r.Status == AwaitingApproval || r.Status == AwaitingInput) && r.PendingRun != "":
		// The run's row says whether it still waits (nearly always); only
		// a decision taken elsewhere needs the run's whole state.
		if waits, err := s.rt.WaitsFor(ctx, r.Owner, r.PendingRun, r.digest()); err != nil || waits {
			return r, nil
		}
		st, err := s.rt.Status(ctx, r.Owner, r.PendingRun)
		if err != nil || waitsFor(r, st) {
			return r, nil
		}
		if err := s.settle.handOver(ctx, r, r.Status, st); err != nil {
			return r, err
		}
		return getRow(ctx, s.db, r.ID)
	}
	return r, nil
}

// digest is the turn digest of the decision the conversation waits for.
func (r row) digest() string {
	switch {
	case r.Card != nil:
		return r.Card.TurnDigest
	case r.Question != nil:
		return r.Question.TurnDigest
	}
	return ""
}

// waitsFor reports whether the run still waits for the decision r shows.
func waitsFor(r row, st agent.Status) bool {
	return st.Status.Waiting() && st.Pending != nil && st.Pending.TurnDigest == r.digest()
}

// recoverInterrupted releases a conversation whose turn or decision was
// lost: the process working its job stopped. While its job
// has had less than a lease, waits to be worked, or its run still runs (the
// run's lease and the reaper decide about that), nothing changes. Then, as
// soon as the run is settled — ended, or paused — the conversation takes its
// state; a turn lost before its run began is started again once
// (restartTurn), and fails as interrupted when it is lost again. An
// end-tour's claim is no turn: its end is carried out (finishEndTour).
func (s *recovery) recoverInterrupted(ctx context.Context, r row) (row, error) {
	if s.clk.Now().Sub(r.UpdatedAt) < s.lease {
		return r, nil
	}
	if r.EndingTour {
		// No turn was lost: an end-tour's request stopped between its
		// claim and its end. Restarting a turn here answered a message
		// long answered and failed a completed tour (the crash run).
		s.tours.finishEndTour(ctx, r)
		return getRow(ctx, s.db, r.ID)
	}
	if r.PendingRun != "" {
		st, err := s.rt.Status(ctx, r.Owner, r.PendingRun)
		if err != nil || !(st.Status.Terminal() || st.Status.Waiting()) {
			return r, nil
		}
		// A requeued turn that completed on another worker hands its answer
		// over from there (QueuedResult), just after its run settled; the
		// run keeps no answer below privacy full, so a read waits for that
		// hand-over for a lease before it settles the turn without it —
		// unless the reply was kept with the run's end (KeepReplyTx).
		if st.Status == run.StatusCompleted && st.RequeueCount > 0 && st.Answer == "" && st.FinishedAt != nil && s.clk.Now().Sub(*st.FinishedAt) < s.lease {
			if reply, err := keptReply(ctx, s.db, r.ID, r.PendingRun); err != nil || reply == "" {
				return r, nil
			}
		}
	}
	if s.queue != nil {
		if waiting, err := s.jobWaiting(ctx, r.ID); err != nil || waiting {
			return r, nil
		}
		if s.rescueDecision(ctx, r) {
			return r, nil
		}
	}
	if r.PendingRun != "" {
		// A card whose decision the runtime accepted before the job was
		// lost is settled first — its outcome and open point — then the
		// conversation takes the run's state.
		// Both commit in one transaction (applyWith).
		var record func(ctx context.Context, tx *store.Tx) error
		if err := persist(ctx, s.log, "settle decided card", func() error {
			st, err := s.rt.Status(ctx, r.Owner, r.PendingRun)
			if err != nil {
				return err
			}
			record, err = s.settle.settleDecided(ctx, r, st)
			return err
		}); err != nil {
			s.log.Error("settle decided card", "conversation", r.ID, "run", r.PendingRun, "err", err)
		}
		s.settle.applyWith(ctx, r.ID, r.UpdatedAt, r.PendingRun, "", nil, record)
	} else if !s.restartTurn(ctx, r) {
		s.settle.fail(ctx, r, errors.New("interrupted"))
	}
	return getRow(ctx, s.db, r.ID)
}

// chatRescuer is the optional ability of a Queue to hand a chat job whose
// worker died back to the workers (queue.Queue has it).
type chatRescuer interface {
	RescueChatJob(ctx context.Context, conversation, at int64, heldSince time.Time) (bool, error)
}

// rescueDecision hands the job of an answered card or question whose
// worker died before the answer reached the runtime back to the workers, and
// reports whether it did: the answer was accepted (202), so it is carried
// out — not offered to the editor again. The run still waiting for the
// card's or question's turn says the answer never reached it; the job, taken
// more than a lease ago and still running, carries the claim the
// conversation holds.
func (s *recovery) rescueDecision(ctx context.Context, r row) bool {
	rq, ok := s.queue.(chatRescuer)
	if !ok || r.PendingRun == "" {
		return false
	}
	var digest string
	switch {
	case r.Decided != nil:
		digest = r.Decided.TurnDigest
	case r.Answered != nil:
		digest = r.Answered.TurnDigest
	default:
		return false
	}
	if waits, err := s.rt.WaitsFor(ctx, r.Owner, r.PendingRun, digest); err != nil || !waits {
		return false
	}
	rescued, err := rq.RescueChatJob(ctx, r.ID, r.UpdatedAt.UnixMicro(), s.clk.Now().Add(-s.lease))
	if err != nil {
		s.log.Error("rescue answered card", "conversation", r.ID, "err", err)
		return false
	}
	if rescued {
		s.log.Info("answer whose worker died handed to the workers again", "conversation", r.ID, "run", r.PendingRun)
	}
	return rescued
}

// NoticeTurnRestarted stands in the transcript where a turn lost before its
// run began was started again (restartTurn).
const NoticeTurnRestarted = "turn_restarted"

// restartTurn starts again, once, a turn whose job was lost before its run
// began (the worker died after taking it): nothing of it ran, so the
// message gets its answer from a new job instead of failing.
// The new claim, the notice and the job commit together, only on the
// processing r read; the lost job, should it ever run, no longer holds its
// claim, and a run it began meanwhile (a worker slow, not dead) keeps the
// conversation: the restart then changes nothing. A turn already restarted
// once for this message fails as interrupted: a turn that takes its worker
// down each time is not tried forever. It reports whether the conversation
// is taken care of — started again, or moved on since r was read — so that
// it must not be failed.
func (s *recovery) restartTurn(ctx context.Context, r row) bool {
	if s.queue == nil {
		return false // without a queue the turn ran in a process that is gone with it
	}
	msgs, err := messages(ctx, s.db, r.ID)
	if err != nil || len(msgs) == 0 || msgs[len(msgs)-1].Notice == NoticeTurnRestarted {
		return false
	}
	now, noRun := micros(s.clk), ""
	won, err := s.jobs.commit(ctx, &job{Op: opTurn, Conversation: r.ID, At: now}, func(tx *store.Tx) (bool, error) {
		won, err := applyTx(ctx, tx, r.ID, evRestartTurn, Processing, change{seenRun: &noRun}.guarded(r, Processing), now)
		if err != nil || !won {
			return won, err
		}
		return true, addMessageTx(ctx, tx, r.ID, Message{Role: "assistant", Notice: NoticeTurnRestarted}, now)
	})
	if err != nil {
		s.log.Error("restart lost turn", "conversation", r.ID, "err", err)
		return false
	}
	if won {
		s.log.Info("lost turn started again", "conversation", r.ID)
	}
	return true // won, or lost to a change since r was read: the next read takes it from there
}
