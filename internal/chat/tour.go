package chat

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"waymark/internal/process"
	"waymark/internal/run"
	"waymark/internal/store"
)

// Ender ends the process of a run (process.Ender).
type Ender interface {
	EndProcess(ctx context.Context, actor int64, id string) (bool, run.Status, error)
}

// EndTour ends a guided tour (item 11): a compare-and-set to idle that clears
// skill, progress, highlight and card, withdraws a waiting run and ends the
// process; applied changes, outcomes and open points stay. A waiting run is
// withdrawn as a message withdraws it: the conversation is claimed first,
// then the run cancelled, so an end that loses the claim changes nothing.
// ErrBusy when a turn runs, the claim lost, or the run was released
// elsewhere and still runs.
func (s *Service) EndTour(ctx context.Context, actor, id int64) (View, error) {
	r, err := s.owned(ctx, actor, id)
	if err != nil {
		return View{}, err
	}
	if r, err = s.reconcile(ctx, r); err != nil {
		return View{}, err
	}
	if r.Status == Processing {
		return View{}, ErrBusy
	}
	s.beforeClaim("end-tour")
	withdrawn := r.Status == AwaitingApproval || r.Status == AwaitingInput
	if withdrawn {
		if r, err = s.withdraw(ctx, r); err != nil {
			return View{}, err
		}
		withdrawn = r.Status == Processing // else handed back after a run that ended
	}
	if !withdrawn {
		won, err := casTx(ctx, s.db, r.ID, []Status{r.Status}, change{status: Processing, err: &r.Error}, s.now())
		if err != nil {
			return View{}, err
		}
		if !won {
			return View{}, ErrBusy
		}
	}
	ended := r.LastRun
	if ended != "" && s.ender != nil {
		if _, _, err := s.ender.EndProcess(ctx, r.Owner, ended); err != nil && !errors.Is(err, process.ErrNotFound) {
			s.release(ctx, r, withdrawn)
			return View{}, err
		}
	}
	zero, no, empty := int64(0), false, ""
	// The run is withdrawn and the process ended: the end goes on here, so
	// a store error is retried (persist), and one that persists releases
	// the claim rather than leave the conversation processing with nothing
	// to move it on (issue 15 item 8).
	if err := s.persist(ctx, "end tour", func() error {
		now := s.now()
		return s.db.InTx(ctx, func(tx *store.Tx) error {
			won, err := casTx(ctx, tx, r.ID, []Status{Processing}, change{status: Idle, skill: &zero, process: &no,
				pendingRun: &empty, lastRun: &ended, progress: emptyJSON(), highlight: emptyJSON(), err: &empty}, now)
			if err != nil || !won {
				return err
			}
			if !r.Process {
				return nil // a free chat had no tour to end
			}
			return addMessageTx(ctx, tx, r.ID, Message{Role: "assistant", Notice: NoticeTourEnded}, now)
		})
	}); err != nil {
		s.release(ctx, r, withdrawn)
		return View{}, err
	}
	return s.Get(ctx, actor, id)
}

// release lets go of a claim a request took (a message, an end) when the
// request fails after it: a withdrawn run's conversation takes the run's
// state (idle after the cancel), any other gets back the status r read
// (issue 15 item 8: a failure never leaves a conversation stuck).
func (s *Service) release(ctx context.Context, r row, withdrawn bool) {
	ctx = context.WithoutCancel(ctx)
	if withdrawn {
		s.apply(ctx, r.ID, time.Time{}, r.PendingRun, "") // the claim's own time is not r's
		return
	}
	if err := s.persist(ctx, "release", func() error {
		_, err := casTx(ctx, s.db, r.ID, []Status{Processing}, change{status: r.Status}, s.now())
		return err
	}); err != nil {
		s.log.Error("release claim", "conversation", r.ID, "err", err)
	}
}

// SetSkill changes the conversation's skill (0 removes it) while it is idle or
// failed; a process the conversation held is ended first, so the next turn
// starts the new one.
func (s *Service) SetSkill(ctx context.Context, actor, id, skillUID int64) (View, error) {
	r, err := s.owned(ctx, actor, id)
	if err != nil {
		return View{}, err
	}
	if r, err = s.reconcile(ctx, r); err != nil {
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
	if r.LastRun != "" && r.Process && s.ender != nil {
		if _, _, err := s.ender.EndProcess(ctx, r.Owner, r.LastRun); err != nil && !errors.Is(err, process.ErrNotFound) {
			return View{}, err
		}
	}
	empty := ""
	won, err := casTx(ctx, s.db, r.ID, []Status{r.Status}, change{status: Idle, skill: &skillUID, process: &isProcess, lastRun: &empty,
		progress: emptyJSON(), highlight: emptyJSON()}, s.now())
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
