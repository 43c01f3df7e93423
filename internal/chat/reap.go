package chat

import (
	"context"
	"fmt"

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
func (s *Service) Reap(ctx context.Context) (int, error) {
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
	return n, nil
}
