package chat

import (
	"context"
	"errors"
	"fmt"
	"time"

	"waymark/internal/store"
)

// reapBatch bounds how many conversations one reaper pass looks at.
const reapBatch = 100

// Reap settles conversations whose turn or decision was lost, as a read
// of each would (reconcile), so that one nobody reads is not left
// processing: every conversation processing for longer than a lease,
// oldest first, up to reapBatch a pass. A turn lost before its run began is
// started again once, an answered card whose worker died before the
// decision reached the runtime is handed to the workers again, and one
// whose run paused or ended takes its state. It runs on the installation's
// reaper (the queue's periodic job, on the elected leader) and returns how
// many conversations it moved on.
func (s *recovery) Reap(ctx context.Context) (int, error) {
	before := store.Micros(s.clk.Now().Add(-s.lease))
	ids, err := store.Collect(ctx, s.db, store.Column[int64],
		"SELECT id FROM conversations WHERE status = ? AND updated_at < ? ORDER BY updated_at, id LIMIT ?", string(Processing), before, reapBatch)
	if err != nil {
		return 0, fmt.Errorf("lost chat turns: %w", err)
	}
	n := 0
	for _, id := range ids {
		r, err := getRow(ctx, s.db, id)
		if err != nil {
			continue // gone meanwhile, or read at the next pass
		}
		got, err := s.reconcile(ctx, r)
		if err != nil {
			s.log.Error("reaper: lost chat turn", "conversation", id, "err", err)
			continue
		}
		if got.Status != r.Status || !got.UpdatedAt.Equal(r.UpdatedAt) {
			n++
		}
	}
	if rq, ok := s.queue.(staleRescuer); ok {
		k, err := rq.RescueStaleChatJobs(ctx, s.clk.Now().Add(-s.lease), reapBatch, s.holdsClaim)
		if err != nil {
			return n, fmt.Errorf("stale chat jobs: %w", err)
		}
		if k > 0 {
			s.log.Info("reaper: chat jobs whose claim had gone handed back to be finished", "jobs", k)
		}
	}
	return n, nil
}

// staleRescuer is the optional ability of a Queue to hand back the chat
// jobs a worker took more than a lease ago whose claim no longer holds
// (queue.Queue has it): after a worker died or gave up on an unreachable
// database, they would stay running — and pending — for a day.
type staleRescuer interface {
	RescueStaleChatJobs(ctx context.Context, heldSince time.Time, limit int, holds func(ctx context.Context, conversation, at int64) (bool, error)) (int, error)
}

// holdsClaim reports whether conversation is still processing for the
// claim at (a chat job's "at"): a job whose claim holds may still act.
func (s *recovery) holdsClaim(ctx context.Context, conversation, at int64) (bool, error) {
	r, err := getRow(ctx, s.db, conversation)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return r.Status == Processing && r.UpdatedAt.UnixMicro() == at, nil
}

// jobWaiting reports whether a chat job of conversation id waits to be
// worked, or was taken by a worker less than a lease ago: a job taken
// longer ago whose conversation is still processing with no run counts as
// lost with its worker. (Counting the lease from the conversation's claim
// instead failed live turns under load: with 500 conversations a job
// waited in the queue for most of a lease, and its turn was judged lost
// seconds after a worker took it.) The queue reads its own tables.
func (s *recovery) jobWaiting(ctx context.Context, id int64) (bool, error) {
	return s.queue.ChatJobWaiting(ctx, "conversation", id, s.clk.Now().Add(-s.lease))
}
