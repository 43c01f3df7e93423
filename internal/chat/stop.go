package chat

import (
	"context"

	"waymark/internal/store"
)

// NoticeStopped is the transcript's line for a turn the editor stopped.
const NoticeStopped = "stopped"

// Stop ends the running turn of conversation id (the editor's Stop) through
// the runtime's guarded cancel: the run is cancelled only while it has not
// ended (a turn that finished first keeps its answer, and Stop is
// ErrNotRunning), and the conversation goes idle with a line saying it was
// stopped, with the part of the reply that had streamed in — only while it
// is still processing that very run, so a late result of the cancelled run
// changes nothing. A turn queued whose run has not begun is taken back the same way:
// its job then finds its claim gone and starts no run.
func (s *Service) Stop(ctx context.Context, actor, id int64) (View, error) {
	return s.stop(ctx, actor, id, 3)
}

// stop is Stop, tried again (tries times at most) when a queued turn's run
// began between the read and the claim: then that run is cancelled.
func (s *Service) stop(ctx context.Context, actor, id int64, tries int) (View, error) {
	r, err := owned(ctx, s.db, actor, id)
	if err != nil {
		return View{}, err
	}
	if r, err = s.recovery.reconcile(ctx, r); err != nil {
		return View{}, err
	}
	if r.Status != Processing || r.EndingTour {
		return View{}, ErrNotRunning // an end-tour's claim runs no turn
	}
	s.test.beforeClaim("stop")
	lastRun := r.LastRun
	// The part of the reply that had streamed in stays in the transcript,
	// marked as stopped (the model's next turn does not read it: transcript);
	// read before the cancel ends the call.
	partial := ""
	if r.PendingRun != "" {
		partial = s.rt.Draft(r.PendingRun)
	}
	if r.PendingRun != "" {
		won, err := s.rt.Cancel(ctx, r.Owner, r.PendingRun)
		if err != nil {
			return View{}, err
		}
		if !won {
			return View{}, ErrNotRunning // it ended first: its result stands
		}
		lastRun = r.PendingRun // the stopped run is the next turn's predecessor
	}
	pending, empty, at := r.PendingRun, "", r.UpdatedAt.UnixMicro()
	c := change{lastRun: &lastRun, pendingRun: &empty, err: &empty, seenRun: &pending}
	if pending == "" {
		c.seenAt = &at // the queued turn as read: its run has not begun
	}
	ctx = context.WithoutCancel(ctx)
	var won bool
	if err := persist(ctx, s.log, "stop", func() error {
		now := micros(s.clk)
		return s.db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			if won, err = applyTx(ctx, tx, r.ID, evStop, Processing, c, now); err != nil || !won {
				return err
			}
			return addMessageTx(ctx, tx, r.ID, Message{Role: "assistant", Content: partial, Notice: NoticeStopped}, now)
		})
	}); err != nil {
		return View{}, err
	}
	if pending != "" {
		// The turn is recorded as stopped: now its model call may end at
		// once (its late ending finds the conversation moved on).
		s.rt.CutShort(pending)
	}
	if !won && partial != "" {
		// The run's own settling recorded the stop first (the cancel reached
		// it at once): its stopped line gets the part.
		if _, err := s.db.Exec(ctx, `UPDATE conversation_messages SET content = ? WHERE id = (SELECT MAX(id) FROM conversation_messages WHERE conversation_id = ?) AND notice = ? AND content = ''`,
			partial, r.ID, NoticeStopped); err != nil {
			return View{}, err
		}
	}
	if !won && pending == "" {
		if tries > 1 {
			return s.stop(ctx, actor, id, tries-1) // its run began meanwhile: stop that
		}
		return View{}, ErrNotRunning
	}
	// A cancelled run whose conversation moved on meanwhile (its result was
	// applied first, as cancelled) is stopped all the same.
	return s.Get(ctx, actor, id)
}
