package chat

import (
	"context"
	"encoding/json"
	"errors"

	"waymark/internal/process"
	"waymark/internal/run"
	"waymark/internal/store"
)

// Ender ends the process of a run (process.Ender).
type Ender interface {
	EndProcess(ctx context.Context, actor int64, id string) (bool, run.Status, error)
}

// SetEnder wires the process ender used by EndTour and SetSkill.
func (s *Service) SetEnder(e Ender) { s.ender = e }

// EndTour ends a guided tour (item 11): a compare-and-set to idle that clears
// skill, progress, highlight and card, withdraws a waiting run and ends the
// process; applied changes, outcomes and open points stay. ErrBusy when a
// turn runs or the guarded cancel lost.
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
	ended := r.LastRun
	if r.Status == AwaitingApproval || r.Status == AwaitingInput {
		won, err := s.rt.CancelIfWaiting(ctx, r.Owner, r.PendingRun)
		if err != nil {
			return View{}, err
		}
		if !won {
			return View{}, ErrBusy
		}
		ended = r.PendingRun
	}
	if ended != "" && s.ender != nil {
		if _, _, err := s.ender.EndProcess(ctx, r.Owner, ended); err != nil && !errors.Is(err, process.ErrNotFound) {
			return View{}, err
		}
	}
	zero, no, empty, none := int64(0), false, "", (*Card)(nil)
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		won, err := casTx(ctx, tx, r.ID, []Status{r.Status}, change{status: Idle, skill: &zero, process: &no, card: &none,
			pendingRun: &empty, lastRun: &ended, progress: emptyJSON(), highlight: emptyJSON(), err: &empty}, s.now())
		if err != nil {
			return err
		}
		if !won {
			return ErrBusy
		}
		return nil
	})
	if err != nil {
		return View{}, err
	}
	return s.Get(ctx, actor, id)
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
		if isProcess, err = s.skillFor(ctx, actor, cfg, skillUID); err != nil {
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
