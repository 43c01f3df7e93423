package chat

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
	"waymark/internal/clock"
	"waymark/internal/openpoint"
	"waymark/internal/store"
)

// base is what every part of the chat works with: the store, the runtime,
// the clock and log, the job queue (commit) and the service goroutines
// jobs run on without one. It owns no conversation state.
type base struct {
	db  *store.DB
	rt  Runtime
	clk clock.Clock
	log *slog.Logger

	queue Queue         // may be nil: jobs run on service goroutines
	lease time.Duration // the runtime's lease (Deps.Lease)
	// work carries out a committed job on a service goroutine (no queue).
	work func(ctx context.Context, j job) error

	ctx context.Context
	wg  sync.WaitGroup // guards nothing; counts running turns

	hookBeforeClaim func(op string) // Deps.Test.BeforeClaim; may be nil
}

func (s *base) beforeClaim(op string) {
	if s.hookBeforeClaim != nil {
		s.hookBeforeClaim(op)
	}
}

func (s *base) now() int64 { return s.clk.Now().UnixMicro() }

// go runs f on a service goroutine.
func (s *base) goRun(f func(ctx context.Context)) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f(s.ctx)
	}()
}

// owned loads a conversation of the actor; others answer like unknown ones.
func (s *base) owned(ctx context.Context, actor, id int64) (row, error) {
	r, err := getRow(ctx, s.db, id)
	if err != nil {
		return row{}, err
	}
	if r.Owner != actor {
		return row{}, ErrNotFound
	}
	return r, nil
}

// commit runs fn and, when it won, records j with it in one transaction
// (as fn left it: fn may fill in what only its transaction knows). Without a
// queue, j runs on a service goroutine once committed.
func (s *base) commit(ctx context.Context, j *job, fn func(tx *store.Tx) (bool, error)) (bool, error) {
	in := s.db.InTx
	if s.queue != nil {
		in = s.queue.InTx
	}
	var won bool
	err := in(ctx, func(tx *store.Tx) error {
		var err error
		if won, err = fn(tx); err != nil || !won {
			return err
		}
		if s.queue != nil {
			return s.queue.InsertChatTx(ctx, tx, *j)
		}
		return nil
	})
	if err == nil && won && s.queue == nil {
		s.goRun(func(ctx context.Context) { _ = s.work(ctx, *j) })
	}
	return won, err
}

// persist runs step — the bookkeeping a chat worker does once a turn or a
// decision ran: the run's state onto the conversation, a card's outcome and
// open points, a failure or a give-back — and runs it again after an error,
// as store.RetryWait says: a few times quickly, and through an outage of the
// database with a backoff for store.OutageWindow. The process continues here, so a store
// error is retried: a step given up would leave the
// conversation processing with nothing to move it on until a lease passed,
// or lose an accepted skip's open point. A refusal (ErrInvalid, an invalid
// open point key) is not retried, nor is anything once ctx is done. Every
// step is idempotent: a guarded compare-and-set, an upsert or a delete
// (an outcome row whose commit was reported unknown but landed is the one
// thing a retry can repeat).
func (s *base) persist(ctx context.Context, what string, step func() error) error {
	return store.Retry(ctx, step, func(err error) bool {
		return errors.Is(err, ErrInvalid) || errors.Is(err, openpoint.ErrInvalidKey)
	}, func(n int, wait time.Duration, err error) {
		s.log.Warn("chat step failed; retrying", "step", what, "attempt", n, "wait", wait, "err", err)
	})
}

// outlast runs read, and runs it again while it fails because the database
// cannot be reached, as store.RetryWait says (an outage of 30 s and more is
// waited out); any other error, and ctx's end, it returns at once. A chat
// job's first reads use it, so an outage does not fail the job and leave
// its conversation to the reaper.
func (s *base) outlast(ctx context.Context, what string, read func() error) error {
	return store.Retry(ctx, read, func(err error) bool { return !store.Unreachable(err) }, func(n int, wait time.Duration, err error) {
		s.log.Warn("database unreachable; waiting", "step", what, "attempt", n, "wait", wait, "err", err)
	})
}
