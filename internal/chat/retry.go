package chat

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"waymark/internal/clock"
	"waymark/internal/openpoint"
	"waymark/internal/store"
)

// micros is the time of clk in the microseconds the conversations store.
func micros(clk clock.Clock) int64 { return clk.Now().UnixMicro() }

// beforeClaim runs the BeforeClaim hook, when a test set one.
func (t TestConfig) beforeClaim(op string) {
	if t.BeforeClaim != nil {
		t.BeforeClaim(op)
	}
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
func persist(ctx context.Context, log *slog.Logger, what string, step func() error) error {
	return store.Retry(ctx, step, func(err error) bool {
		return errors.Is(err, ErrInvalid) || errors.Is(err, openpoint.ErrInvalidKey)
	}, func(n int, wait time.Duration, err error) {
		log.Warn("chat step failed; retrying", "step", what, "attempt", n, "wait", wait, "err", err)
	})
}

// outlast runs read, and runs it again while it fails because the database
// cannot be reached, as store.RetryWait says (an outage of 30 s and more is
// waited out); any other error, and ctx's end, it returns at once. A chat
// job's first reads use it, so an outage does not fail the job and leave
// its conversation to the reaper.
func outlast(ctx context.Context, log *slog.Logger, what string, read func() error) error {
	return store.Retry(ctx, read, func(err error) bool { return !store.Unreachable(err) }, func(n int, wait time.Duration, err error) {
		log.Warn("database unreachable; waiting", "step", what, "attempt", n, "wait", wait, "err", err)
	})
}
