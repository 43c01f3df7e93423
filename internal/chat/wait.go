package chat

import (
	"context"
	"fmt"
	"time"
)

// MaxWait bounds the wait of WaitChange (GET /api/conversations/{id}?wait=).
const MaxWait = 30 * time.Second

// changeCheck is how often a waiter looks at the conversation in the
// database while no signal of this process woke it: the fallback for a
// change committed by another process (a worker of its own), and for a
// decision taken elsewhere that only a read hands over (reconcile).
const changeCheck = 150 * time.Millisecond

// WaitChange returns the conversation of the actor (as Get) as soon as its
// updatedAt differs from after, or once d has passed or done is closed (the
// server drains) — then as it is, unchanged (a client waits for
// the next card instead of polling). It wakes on the signal this process
// sends whenever it commits a change to the conversation (casTx, store.Watch;
// on PostgreSQL every process's, through NOTIFY), and otherwise reads it
// every changeCheck, handing over a decision taken
// elsewhere as Get does; a waiter costs no goroutine of its own. d must be
// positive and at most MaxWait (ErrInvalid otherwise, nothing read).
func (s *Service) WaitChange(ctx context.Context, actor, id int64, after time.Time, d time.Duration, done <-chan struct{}) (View, error) {
	if d <= 0 || d > MaxWait {
		return View{}, fmt.Errorf("%w: wait: want a duration above 0 and at most %v, got %v", ErrInvalid, MaxWait, d)
	}
	want := after.UnixMicro()
	timer := time.NewTimer(d)
	defer timer.Stop()
	check := time.NewTicker(changeCheck)
	defer check.Stop()
	signalled := false
	for {
		ch, release := s.db.Watch(changeKey(id)) // before the read: a change after it closes ch
		if signalled {
			// A signal is a committed change of the conversation (casTx
			// moves updatedAt): read it whole at once, as Get does.
			v, err := s.Get(ctx, actor, id)
			if err != nil || v.UpdatedAt.UnixMicro() != want {
				release()
				return v, err
			}
		} else {
			changed, err := s.changedSince(ctx, actor, id, want)
			if err != nil || changed {
				release()
				if err != nil {
					return View{}, err
				}
				return s.Get(ctx, actor, id)
			}
		}
		select {
		case <-ch:
			signalled = true
		case <-check.C:
			signalled = false
		case <-timer.C:
			release()
			return s.Get(ctx, actor, id)
		case <-done:
			release()
			return s.Get(ctx, actor, id)
		case <-ctx.Done():
			release()
			return View{}, ctx.Err()
		}
		release()
	}
}

// changedSince reports whether the conversation's updatedAt (unix
// microseconds) is no longer want, after reconciling it as Get does.
func (s *Service) changedSince(ctx context.Context, actor, id, want int64) (bool, error) {
	r, err := owned(ctx, s.db, actor, id)
	if err != nil {
		return false, err
	}
	if r.UpdatedAt.UnixMicro() != want {
		return true, nil
	}
	if r, err = s.recovery.reconcile(ctx, r); err != nil {
		return false, err
	}
	return r.UpdatedAt.UnixMicro() != want, nil
}

// Waiters reports how many reads of this process wait for a change of
// conversation id (WaitChange): tests use it to know a waiter is in place.
func (s *Service) Waiters(id int64) int { return s.db.Watchers(changeKey(id)) }

// WatchChange returns a channel closed at the next change this process
// commits to conversation id, and the function that ends the watch (the
// conversation stream's wake-up, sse.Config.Watch).
func (s *Service) WatchChange(id int64) (<-chan struct{}, func()) { return s.db.Watch(changeKey(id)) }
