package run

import (
	"context"
	"fmt"
	"time"

	"waymark/internal/store"
)

// Purge applies retention: it deletes terminal runs finished before
// finishedBefore, and runs waiting for a decision whose last change
// (updated_at: the suspend) is before waitingBefore, each with its events.
// Queued and running runs are never purged. A zero time purges nothing of its
// kind. It returns how many runs it deleted.
func (s *Store) Purge(ctx context.Context, finishedBefore, waitingBefore time.Time) (int, error) {
	var n int64
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		const doomed = `SELECT uuid FROM runs WHERE (status IN ('completed', 'failed', 'cancelled')
			AND finished_at > 0 AND finished_at < ?) OR (status IN ` + waitingSQL + ` AND updated_at < ?)`
		fin, wait := store.Micros(finishedBefore), store.Micros(waitingBefore)
		// Events go explicitly too, so retention never rests on the cascade alone.
		if _, err := tx.Exec(ctx, `DELETE FROM run_events WHERE run_uuid IN (`+doomed+`)`, fin, wait); err != nil {
			return err
		}
		res, err := tx.Exec(ctx, `DELETE FROM runs WHERE uuid IN (`+doomed+`)`, fin, wait)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("purge runs: %w", err)
	}
	return int(n), nil
}
