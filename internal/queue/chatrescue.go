package queue

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"waymark/internal/store"
)

// RescueChatJob hands the chat job of conversation that carries the claim
// at (the job's "at", the conversation's updated_at when it was recorded)
// back to the workers, when a worker took it before heldSince and it still
// reads as running: its worker died before it acted (the chat knows, from
// the run still waiting for the decision). River rescues a running job only
// after a day (RescueStuckJobsAfter), so an answer accepted with 202 would
// otherwise wait that long, or be offered to the editor again. Worked
// again, the job acts only while its claim holds, and the decision runs
// every check again. The hand-back is one guarded UPDATE: a job finished or
// taken again meanwhile (its attempt moved) is left alone. It reports
// whether it handed a job back.
func (q *Queue) RescueChatJob(ctx context.Context, conversation, at int64, heldSince time.Time) (bool, error) {
	conv, claim := "json_extract(args, '$.job.conversation')", "json_extract(args, '$.job.at')"
	if q.db.Dialect() == store.Postgres {
		conv, claim = "(args->'job'->>'conversation')::bigint", "(args->'job'->>'at')::bigint"
	}
	type stuck struct {
		id      int64
		attempt int
		taken   sql.NullTime
	}
	jobs, err := store.Collect(ctx, q.db, func(sc store.Scanner) (stuck, error) {
		var j stuck
		return j, sc.Scan(&j.id, &j.attempt, &j.taken)
	}, `SELECT id, attempt, attempted_at FROM river_job WHERE kind = ? AND state = 'running' AND `+conv+` = ? AND `+claim+` = ?`,
		ChatArgs{}.Kind(), conversation, at)
	if err != nil {
		return false, fmt.Errorf("stuck chat job of conversation %d: %w", conversation, err)
	}
	for _, j := range jobs {
		if j.taken.Valid && !j.taken.Time.Before(heldSince) {
			continue // taken within the lease: its worker may be alive
		}
		res, err := q.db.Exec(ctx, `UPDATE river_job SET state = 'available' WHERE id = ? AND kind = ? AND state = 'running' AND attempt = ?`,
			j.id, ChatArgs{}.Kind(), j.attempt)
		if err != nil {
			return false, fmt.Errorf("rescue chat job %d: %w", j.id, err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 1 {
			return true, nil
		}
	}
	return false, nil
}
