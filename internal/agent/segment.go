package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"waymark/internal/llmconfig"
	"waymark/internal/run"
	"waymark/internal/store"
)

// segment is one stretch of execution that holds a run's lease: an
// interactive start, a worker pickup or a resume. Its events are buffered and
// committed with the next guarded transition.
type segment struct {
	rt      *Driver
	run     run.Run
	owner   string
	cfg     llmconfig.Configuration
	privacy run.Privacy
	// queued: the run has a stored request, so a retryable failure may requeue it.
	queued bool
	// resumed: the segment continues a suspended run; it can never be requeued.
	resumed bool
	events  []run.NewEvent
	usage   run.Usage // not yet added to the row
	// answered is what the runtime answered each call of this segment, by
	// call id (the latest answer counts; a rolled-back write is removed):
	// the result of a decision, whatever the privacy level stores.
	answered map[string]CallResult
}

func (rt *Driver) newSegment(r run.Run, owner string, cfg llmconfig.Configuration, queued bool) *segment {
	return &segment{rt: rt, run: r, owner: owner, cfg: cfg, privacy: privacyOf(cfg), queued: queued}
}

// emit buffers an event for the next flush, encoded now so the flush's
// transaction only writes (an event that cannot be encoded is kept raw and
// fails the flush).
func (s *segment) emit(kind run.Kind, payload any) {
	e := run.NewEvent{Kind: kind, Payload: payload}
	if enc, err := run.Encode(s.run.UUID, e, s.privacy); err == nil {
		e = enc
	}
	s.events = append(s.events, e)
}

// flush is what the next guarded transition commits: the buffered events and usage.
func (s *segment) flush() run.Flush {
	return run.Flush{Events: s.events, Usage: s.usage, Privacy: s.privacy}
}

// dropEvents removes the buffered events of kind (ones a failed flush could
// not store), keeping the others in order.
func (s *segment) dropEvents(kind run.Kind) {
	kept := s.events[:0]
	for _, e := range s.events {
		if e.Kind != kind {
			kept = append(kept, e)
		}
	}
	s.events = kept
}

func (s *segment) flushed() {
	s.events = s.events[:0]
	s.usage = run.Usage{}
}

// errLost: the segment no longer owns the run (lease lost, cancelled, ended elsewhere).
var errLost = errors.New("segment lost its run")

// beginTx begins a transaction: the database's InTx, or the queue's when
// the transition inserts a job with it.
type beginTx func(ctx context.Context, fn func(tx *store.Tx) error) error

// commit is the one guarded commit of a segment: in one
// transaction begun by begin, transition runs the guarded transition (with
// the segment's flush) and reports whether its guard won. A lost guard rolls
// the transaction back and returns lost; a commit empties the buffered
// events and usage the transition stored.
func (s *segment) commit(ctx context.Context, begin beginTx, lost error, transition func(tx *store.Tx) (bool, error)) error {
	err := begin(ctx, func(tx *store.Tx) error {
		won, err := transition(tx)
		if err != nil {
			return err
		}
		if !won {
			return lost
		}
		return nil
	})
	if err == nil {
		s.flushed()
	}
	return err
}

// commitEnd is commit for the transition that ends the segment's stretch —
// the run settles or suspends — run again after a store error: the process
// continues here (CHECKLIST LC4) — through an outage of
// the database too (store.RetryWait), and a settle or suspend
// given up would leave the run running with nobody to move it on until its
// lease expired, and its conversation failed instead of showing the next
// card. A replay is safe: the transaction rolled back, and one whose commit
// landed though it reported an error finds the run no longer running (its
// guard loses: lost). A refusal of the run store (run.ErrInvalid) and a lost
// guard are not retried, nor is anything once ctx is done.
func (s *segment) commitEnd(ctx context.Context, lost error, transition func(tx *store.Tx) (bool, error)) error {
	return store.Retry(ctx, func() error { return s.commit(ctx, s.rt.db.InTx, lost, transition) },
		func(err error) bool { return errors.Is(err, lost) || errors.Is(err, run.ErrInvalid) },
		func(n int, wait time.Duration, err error) {
			s.rt.log.Warn("run transition failed; retrying", "run", s.run.UUID, "attempt", n, "wait", wait, "err", err)
		})
}

// renew is a guarded renewal of the lease that commits the buffered events
// and sets or clears the write fence (fence as run.Renewal.Fence), in one
// transaction. It returns errLost when the guard fails.
func (s *segment) renew(ctx context.Context, fence []byte) error {
	return s.commit(ctx, s.rt.db.InTx, errLost, func(tx *store.Tx) (bool, error) {
		return s.rt.runs.RenewTx(ctx, tx, s.run.UUID, run.Renewal{Owner: s.owner, Lease: s.rt.cfg.Lease, Fence: fence}, s.flush())
	})
}

// boundary is a step boundary: renew the lease, commit the buffered events.
func (s *segment) boundary(ctx context.Context) error { return s.renew(ctx, nil) }

// settle ends the run under the owner guard, with its buffered events and a status event.
func (s *segment) settle(ctx context.Context, status run.Status, reason run.Reason, errClass, msg, answer string) error {
	s.emit(run.EventStatus, map[string]any{"status": status, "reason": reason, "errorClass": errClass})
	err := s.commitEnd(ctx, errLost, func(tx *store.Tx) (bool, error) {
		won, err := s.rt.runs.SettleTx(ctx, tx, s.run.UUID, run.Settlement{Owner: s.owner, Status: status, Reason: reason, ErrClass: errClass, ErrMsg: msg, Answer: run.StoredAnswer(s.privacy, answer)}, s.flush())
		if err != nil || !won || status != run.StatusCompleted || answer == "" || s.rt.cfg.CompletedTx == nil {
			return won, err
		}
		// The answer goes to whoever waits for it in the transaction that
		// completes the run, at every privacy level: a worker that dies
		// after this commit cannot take it along (Config.CompletedTx).
		return true, s.rt.cfg.CompletedTx(ctx, tx, s.run.UUID, answer)
	})
	if err != nil && !errors.Is(err, errLost) {
		s.rt.log.Error("settle failed", "run", s.run.UUID, "err", err)
	}
	return err
}

// fail settles the run failed with reason.
func (s *segment) fail(ctx context.Context, reason run.Reason, class, msg string) {
	_ = s.settle(ctx, run.StatusFailed, reason, class, msg, "")
}

// requeue puts a queued run back with a delayed job, under the owner guard.
func (s *segment) requeue(ctx context.Context) error {
	if s.rt.queue == nil {
		return errors.New("no queue")
	}
	n := s.run.RequeueCount + 1
	s.emit(run.EventStatus, map[string]any{"status": run.StatusQueued, "requeue": n})
	return s.commit(ctx, s.rt.queue.InTx, errLost, func(tx *store.Tx) (bool, error) {
		won, err := s.rt.runs.RequeueTx(ctx, tx, s.run.UUID, run.Requeuing{Owner: s.owner, Requeues: s.run.RequeueCount}, s.flush())
		if err != nil || !won {
			return won, err
		}
		return true, s.rt.queue.InsertTx(ctx, tx, s.run.UUID, s.rt.cfg.Backoff(n))
	})
}

// suspend moves the run to a waiting status with its state, under the owner
// guard, committing the buffered events; pause is how many of them (the
// last) announce the pause. A suspension that cannot be stored even after
// retries drops those: the run did not pause, and what ends it next (a
// failure) must not tell a pause that never happened — an accepted skip
// before it would look accepted (ADR-022 P.R4).
func (s *segment) suspend(ctx context.Context, to run.Status, body []byte, pause int) error {
	err := s.commitEnd(ctx, errLost, func(tx *store.Tx) (bool, error) {
		return s.rt.runs.SuspendTx(ctx, tx, s.run.UUID, run.Suspension{Owner: s.owner, To: to, State: body}, s.flush())
	})
	if err != nil && pause <= len(s.events) {
		s.events = s.events[:len(s.events)-pause]
	}
	return err
}

func (s *segment) String() string { return fmt.Sprintf("%s@%s", s.run.UUID, s.owner) }
