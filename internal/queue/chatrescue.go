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

// RescueStaleChatJobs hands back to the workers every chat job that a
// worker took before heldSince and that still reads as running although
// its claim no longer holds (holds, given the job's conversation and claim,
// says whether the conversation is still processing for it): its worker
// died, or lost the database and gave up, and the conversation was settled
// without it — by another worker, the reaper, or the editor's next read.
// Nothing would finish such a job before River's rescue a day later, and
// waymark_chat_jobs_pending would count it all that time. Worked again, it
// finds its claim gone and is dropped (chat.Service.Work), so this is safe
// for a job whose worker is alive too; a job whose claim still holds is
// left to RescueChatJob and the chat's reaper. Each hand-back is one
// guarded UPDATE (state and attempt unchanged). It returns how many it
// handed back, at most limit a call.
func (q *Queue) RescueStaleChatJobs(ctx context.Context, heldSince time.Time, limit int, holds func(ctx context.Context, conversation, at int64) (bool, error)) (int, error) {
	conv, claim := "json_extract(args, '$.job.conversation')", "json_extract(args, '$.job.at')"
	if q.db.Dialect() == store.Postgres {
		conv, claim = "(args->'job'->>'conversation')::bigint", "(args->'job'->>'at')::bigint"
	}
	type stale struct {
		id, conversation, at int64
		attempt              int
		taken                sql.NullTime
	}
	// The times are compared here, as River's drivers store them.
	jobs, err := store.Collect(ctx, q.db, func(sc store.Scanner) (stale, error) {
		var j stale
		return j, sc.Scan(&j.id, &j.conversation, &j.at, &j.attempt, &j.taken)
	}, `SELECT id, `+conv+`, `+claim+`, attempt, attempted_at FROM river_job WHERE kind = ? AND state = 'running' ORDER BY id`,
		ChatArgs{}.Kind())
	if err != nil {
		return 0, fmt.Errorf("stale chat jobs: %w", err)
	}
	n := 0
	for _, j := range jobs {
		if n == limit {
			break
		}
		if !j.taken.Valid || !j.taken.Time.Before(heldSince) {
			continue // taken within the lease: its worker may be at work
		}
		held, err := holds(ctx, j.conversation, j.at)
		if err != nil {
			return n, fmt.Errorf("stale chat job %d: %w", j.id, err)
		}
		if held {
			continue
		}
		ok, err := q.handBack(ctx, j.id, ChatArgs{}.Kind(), j.attempt)
		if err != nil {
			return n, fmt.Errorf("rescue stale chat job %d: %w", j.id, err)
		}
		if ok {
			n++
		}
	}
	return n, nil
}
