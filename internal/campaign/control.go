package campaign

import (
	"context"
	"fmt"
	"time"

	"waymark/internal/access"
	"waymark/internal/store"
)

// Change applies ev (pause, resume or cancel) to campaign id for its owner
// or an administrator, by one guarded UPDATE; a campaign whose state does
// not allow it is ErrState and nothing changed. A resume enqueues the
// campaign's work with the change; a cancel skips the pages not started
// (reason "cancelled") — tours already started keep their cards.
func (s *Service) Change(ctx context.Context, a *access.Actor, id int64, ev Event) (View, error) {
	if ev != EventPause && ev != EventResume && ev != EventCancel {
		return View{}, fmt.Errorf("%w: event %q", ErrInvalid, ev)
	}
	r, err := s.visible(ctx, a, id)
	if err != nil {
		return View{}, err
	}
	now := s.now()
	var won bool
	change := func(tx *store.Tx) error {
		if won, err = fire(ctx, tx, r.ID, ev, now); err != nil || !won {
			return err
		}
		switch ev {
		case EventCancel:
			_, err = tx.Exec(ctx, "UPDATE campaign_items SET state = ?, reason = ?, finished_at = ? WHERE campaign_id = ? AND state = ?",
				string(ItemSkipped), "cancelled", now, r.ID, string(ItemPending))
			return err
		case EventResume:
			if _, err := tx.Exec(ctx, "UPDATE campaigns SET ticked_at = ? WHERE id = ?", s.freshMark(), r.ID); err != nil {
				return err
			}
			if s.d.Queue != nil {
				return s.d.Queue.InsertCampaignTx(ctx, tx, r.ID)
			}
		}
		return nil
	}
	if ev == EventResume && s.d.Queue != nil {
		err = s.d.Queue.InTx(ctx, change)
	} else {
		err = s.d.DB.InTx(ctx, change)
	}
	if err != nil {
		return View{}, fmt.Errorf("%s campaign %d: %w", ev, id, err)
	}
	if !won {
		return View{}, ErrState
	}
	return s.Get(ctx, a, id)
}

// freshMark is the lease mark of a campaign whose job was just enqueued:
// lapsed, so the job takes it at once, and recent, so the reaper leaves it
// be for its cut.
func (s *Service) freshMark() int64 { return s.clk.Now().Add(-s.lease() - time.Second).UnixMicro() }

// Reap gives every running campaign that no job has worked for a while
// (its process died mid-job, its job was lost) a new job. A campaign whose
// job merely waits its turn gets a second one: the lease lets one of them
// work it (Work). A reaped campaign's mark moves on, so the reaper hands it
// on once a while, not on every pass.
func (s *Service) Reap(ctx context.Context) (int, error) {
	if s.d.Queue == nil {
		return 0, nil
	}
	now := s.clk.Now()
	cut := now.Add(-max(2*s.lease(), 30*time.Second)).UnixMicro()
	ids, err := store.Collect(ctx, s.d.DB, store.Column[int64], "SELECT id FROM campaigns WHERE state = ? AND ticked_at < ?", string(Running), cut)
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		// The mark is set to when the lease would lapse: the new job may
		// take it at once, and the reaper looks again after its cut.
		mark := now.Add(-s.lease()).UnixMicro()
		err := s.d.Queue.InTx(ctx, func(tx *store.Tx) error {
			res, err := tx.Exec(ctx, "UPDATE campaigns SET ticked_at = ? WHERE id = ? AND state = ? AND ticked_at < ?", mark, id, string(Running), cut)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return nil
			}
			return s.d.Queue.InsertCampaignTx(ctx, tx, id)
		})
		if err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}
