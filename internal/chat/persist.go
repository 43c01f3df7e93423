package chat

import (
	"context"
	"errors"
	"time"

	"waymark/internal/openpoint"
)

// persistAttempts bounds how often persist tries one step.
const persistAttempts = 4

// persistBackoff is the wait before the n-th retry (n from 1).
func persistBackoff(n int) time.Duration { return time.Duration(10<<(2*(n-1))) * time.Millisecond }

// persist runs step — the bookkeeping a chat worker does once a turn or a
// decision ran: the run's state onto the conversation, a card's outcome and
// open points, a failure or a give-back — and runs it again after an error,
// a few times, with a short wait. The process continues here, so a store
// error is retried (issue 15 item 8): a step given up would leave the
// conversation processing with nothing to move it on until a lease passed,
// or lose an accepted skip's open point. A refusal (ErrInvalid, an invalid
// open point key) is not retried, nor is anything once ctx is done. Every
// step is idempotent: a guarded compare-and-set, an upsert or a delete
// (an outcome row whose commit was reported unknown but landed is the one
// thing a retry can repeat).
func (s *Service) persist(ctx context.Context, what string, step func() error) error {
	var err error
	for n := 1; ; n++ {
		if err = step(); err == nil || errors.Is(err, ErrInvalid) || errors.Is(err, openpoint.ErrInvalidKey) ||
			n == persistAttempts || ctx.Err() != nil {
			return err
		}
		s.log.Warn("chat step failed; retrying", "step", what, "attempt", n, "err", err)
		t := time.NewTimer(persistBackoff(n))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
}
