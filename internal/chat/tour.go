package chat

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"waymark/internal/clock"
	"waymark/internal/process"
	"waymark/internal/run"
	"waymark/internal/store"
)

// Ender ends the process of a run (process.Ender).
type Ender interface {
	EndProcess(ctx context.Context, actor int64, id string) (bool, run.Status, error)
}

// tours carries out the end of a tour, for the editor's EndTour and for a
// recovery that finds an end-tour whose request stopped.
type tours struct {
	db    *store.DB
	ender Ender // may be nil: no process to end
	clk   clock.Clock
	log   *slog.Logger
}

func newTours(db *store.DB, ender Ender, clk clock.Clock, log *slog.Logger) *tours {
	return &tours{db: db, ender: ender, clk: clk, log: log}
}

var _ tourFinisher = (*tours)(nil)

// endProcess ends the process of run id, if there is an Ender; a process
// ended already is no error.
func (s *tours) endProcess(ctx context.Context, owner int64, id string) error {
	if s.ender == nil {
		return nil
	}
	if _, _, err := s.ender.EndProcess(ctx, owner, id); err != nil && !errors.Is(err, process.ErrNotFound) {
		return err
	}
	return nil
}

// EndTour ends a guided tour (item 11): a compare-and-set to idle that clears
// skill, progress, highlight and card, withdraws a waiting run and ends the
// process; applied changes, outcomes and open points stay. A waiting run is
// withdrawn as a message withdraws it: the conversation is claimed first,
// then the run cancelled, so an end that loses the claim changes nothing.
// ErrBusy when a turn runs, the claim lost, or the run was released
// elsewhere and still runs.
//
// Any other end claims the conversation as an end-tour's (endingTour): a
// process that dies between the claim and the end leaves it processing
// with no turn, job or run, and the recovery must carry the end out, not
// take the claim for a turn lost before its run began and restart it (the
// crash run: a completed tour ended failed with turn_restarted).
func (s *Service) EndTour(ctx context.Context, actor, id int64) (View, error) {
	r, err := owned(ctx, s.db, actor, id)
	if err != nil {
		return View{}, err
	}
	if r, err = s.recovery.reconcile(ctx, r); err != nil {
		return View{}, err
	}
	if r.Status == Processing {
		return View{}, ErrBusy
	}
	s.test.beforeClaim("end-tour")
	withdrawn := r.Status == AwaitingApproval || r.Status == AwaitingInput
	if withdrawn {
		if r, err = s.turns.withdraw(ctx, r); err != nil {
			return View{}, err
		}
		withdrawn = r.Status == Processing // else handed back after a run that ended
		if r.Status == AwaitingApproval || r.Status == AwaitingInput {
			return View{}, ErrBusy // another decision waits since (read after the hand-back)
		}
	}
	var claim *int64 // the end-tour's own claim (not a withdrawal's)
	if !withdrawn {
		at, mark := micros(s.clk), endingTour
		won, err := applyTx(ctx, s.db, r.ID, evClaimEndTour, r.Status, change{err: &mark}, at)
		if err != nil {
			return View{}, err
		}
		if !won {
			return View{}, ErrBusy
		}
		claim = &at
	}
	if err := s.tours.endTour(ctx, r, claim); err != nil {
		if withdrawn {
			s.settle.release(ctx, r)
		} else {
			s.tours.giveBack(ctx, r, *claim)
		}
		return View{}, err
	}
	return s.Get(ctx, actor, id)
}

// endingTour, in the error column of a processing conversation, marks the
// claim of an end-tour (EndTour): the conversation is processing for no
// turn; scanRow reads it as row.EndingTour.
const endingTour = "ending_tour"

// endTour ends the process of r's last run and the tour of conversation r,
// claimed (processing) at claim — nil: claimed by a withdrawal, whose time
// r does not hold. The end changes the conversation only while that claim
// holds: an end carried out by a recovery meanwhile, or a message claimed
// after it, is left as it is.
func (s *tours) endTour(ctx context.Context, r row, claim *int64) error {
	ended := r.LastRun
	if ended != "" {
		if err := s.endProcess(ctx, r.Owner, ended); err != nil {
			return err
		}
	}
	zero, no, empty := int64(0), false, ""
	// The run is withdrawn and the process ended: the end goes on here, so
	// a store error is retried (persist), and one that persists releases
	// the claim rather than leave the conversation processing with nothing
	// to move it on.
	return persist(ctx, s.log, "end tour", func() error {
		now := micros(s.clk)
		return s.db.InTx(ctx, func(tx *store.Tx) error {
			won, err := applyTx(ctx, tx, r.ID, evEndTour, Processing, change{skill: &zero, process: &no,
				pendingRun: &empty, lastRun: &ended, progress: emptyJSON(), highlight: emptyJSON(), err: &empty, seenAt: claim}, now)
			if err != nil || !won {
				return err
			}
			if !r.Process {
				return nil // a free chat had no tour to end
			}
			return addMessageTx(ctx, tx, r.ID, Message{Role: "assistant", Notice: NoticeTourEnded}, now)
		})
	})
}

// finishEndTour carries out the end-tour whose claim r shows (EndingTour)
// when the request that claimed it stopped before the end — its process
// died: the editor asked for the end, and the process may have been ended
// already, so the end is completed, never restarted as a turn nor failed.
// A failure leaves the claim to the next read or reaper pass.
func (s *tours) finishEndTour(ctx context.Context, r row) {
	at := r.UpdatedAt.UnixMicro()
	if err := s.endTour(context.WithoutCancel(ctx), r, &at); err != nil {
		s.log.Error("finish interrupted end-tour", "conversation", r.ID, "err", err)
		return
	}
	s.log.Info("interrupted end-tour carried out", "conversation", r.ID)
}

// giveBack lets go of the claim taken at on conversation r when the request
// fails after it: the conversation gets back the status and error r read,
// only while that claim holds (a failure never leaves it stuck).
func (s *tours) giveBack(ctx context.Context, r row, at int64) {
	ctx = context.WithoutCancel(ctx)
	if err := persist(ctx, s.log, "release", func() error {
		_, err := applyTx(ctx, s.db, r.ID, evGiveBack, Processing, change{status: r.Status, err: &r.Error, seenAt: &at}, micros(s.clk))
		return err
	}); err != nil {
		s.log.Error("release claim", "conversation", r.ID, "err", err)
	}
}

// SetSkill changes the conversation's skill (0 removes it) while it is idle or
// failed; a process the conversation held is ended first, so the next turn
// starts the new one.
func (s *Service) SetSkill(ctx context.Context, actor, id, skillUID int64) (View, error) {
	r, err := owned(ctx, s.db, actor, id)
	if err != nil {
		return View{}, err
	}
	if r, err = s.recovery.reconcile(ctx, r); err != nil {
		return View{}, err
	}
	if r.Status != Idle && r.Status != Failed {
		return View{}, ErrBusy
	}
	isProcess := false
	if skillUID != 0 {
		cfg, err := s.configs.Get(ctx, r.Configuration)
		if err != nil {
			return View{}, err
		}
		a, err := s.activeActor(ctx, actor)
		if err != nil {
			return View{}, err
		}
		if isProcess, err = s.skillFor(ctx, a, cfg, skillUID, r.Page); err != nil {
			return View{}, err
		}
	}
	if r.LastRun != "" && r.Process {
		if err := s.tours.endProcess(ctx, r.Owner, r.LastRun); err != nil {
			return View{}, err
		}
	}
	empty := ""
	won, err := applyTx(ctx, s.db, r.ID, evSetSkill, r.Status, change{skill: &skillUID, process: &isProcess, lastRun: &empty,
		progress: emptyJSON(), highlight: emptyJSON()}, micros(s.clk))
	if err != nil {
		return View{}, err
	}
	if !won {
		return View{}, ErrBusy
	}
	return s.Get(ctx, actor, id)
}

func emptyJSON() *json.RawMessage {
	r := json.RawMessage("")
	return &r
}

// NoticeTourEnded closes the transcript of a tour the editor ended
// (EndTour): what was applied stays, the chat goes on without a process.
const NoticeTourEnded = "tour_ended"
