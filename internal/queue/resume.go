package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"waymark/internal/access"
	"waymark/internal/store"
)

// ResumeHandler carries out a resume job — a decision on a waiting run
// taken through the runs API — from the payload it was inserted with, and
// returns the outcome to record for the request that waits for it.
// It returns an error only for a fault before anything changed:
// River then retries the job. It is implemented by agent.Runtime.
type ResumeHandler interface {
	WorkResume(ctx context.Context, payload json.RawMessage) (outcome any, err error)
}

// ResumeArgs is a resume job: the decision or input to carry out.
type ResumeArgs struct {
	Job json.RawMessage `json:"job"`
}

// Kind names the resume job kind in River's tables.
func (ResumeArgs) Kind() string { return "waymark_resume" }

// InsertOpts puts resume jobs on the chat queue: like a card answer in a
// conversation, a decision on a run is a person waiting for a resumed turn.
func (ResumeArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: QueueChat} }

// resumeAttempts: a resume job is retried only after a fault before it
// claimed its run (ResumeHandler), and a person waits for it, so its retries
// come quickly (resumeWorker.NextRetry) and are few: within about three
// seconds a store that stays down discards the job, the run keeps waiting
// and the request answers the failure.
const resumeAttempts = 4

// InsertResumeTx enqueues a resume job with payload (JSON-encoded) inside
// tx (from Queue.InTx) and returns its id for ResumeOutcome.
func (q *Queue) InsertResumeTx(ctx context.Context, tx *store.Tx, payload any) (int64, error) {
	if tx.SQL == nil {
		return 0, ErrNeedsSQLTx
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return 0, fmt.Errorf("resume job: %w", err)
	}
	res, err := q.client.InsertTx(ctx, tx.SQL, ResumeArgs{Job: raw}, &river.InsertOpts{Queue: QueueChat, MaxAttempts: resumeAttempts, Metadata: q.traceMetadata(ctx)})
	if err != nil {
		return 0, fmt.Errorf("enqueue resume job: %w", err)
	}
	q.insertedIn(tx, QueueChat)
	return res.Job.ID, nil
}

// ResumeOutcome reads resume job id. done reports whether the job finished:
// completed, with the outcome its handler returned as output, or discarded
// or cancelled, with a nil output (every attempt failed). A job that waits,
// runs or waits for a retry is not done.
func (q *Queue) ResumeOutcome(ctx context.Context, id int64) (output json.RawMessage, done bool, err error) {
	job, err := q.client.JobGet(ctx, id)
	if err != nil {
		return nil, false, fmt.Errorf("resume job %d: %w", id, err)
	}
	switch job.State {
	case rivertype.JobStateCompleted:
		return job.Output(), true, nil
	case rivertype.JobStateDiscarded, rivertype.JobStateCancelled:
		return nil, true, nil
	}
	return nil, false, nil
}

type resumeWorker struct {
	river.WorkerDefaults[ResumeArgs]
	q *Queue
}

func (w *resumeWorker) Work(ctx context.Context, job *river.Job[ResumeArgs]) error {
	if w.q.h.Resume == nil {
		return ErrNoHandler
	}
	out, err := w.q.h.Resume.WorkResume(access.WithActorMemo(ctx), job.Args.Job)
	if err != nil {
		return err
	}
	return river.RecordOutput(ctx, out)
}

// NextRetry retries a failed resume job after attempt² × 100 ms (see
// resumeAttempts), not after River's default of seconds to hours.
func (w *resumeWorker) NextRetry(job *river.Job[ResumeArgs]) time.Time {
	return time.Now().Add(time.Duration(job.Attempt*job.Attempt) * 100 * time.Millisecond)
}

// RescueStuckResumes hands resume jobs whose worker is gone back to the
// workers: every resume job a worker took before
// heldSince that still reads as running, unless busy says its run is being
// worked (claimed by that job's worker, which may be alive and working the
// continuation, or by another segment — the reaper settles a claimed run
// whose lease lapsed first, and the job is rescued at its next pass). River
// rescues a running job only after a day (RescueStuckJobsAfter: a run job
// must never run twice), so a resume job whose worker died before it
// claimed its run would carry the decision out a day late. Worked again,
// the decision runs every check again: a run decided meanwhile records the
// refusal as the job's outcome, and two workers of one job are decided by
// the run's claim. It returns how many jobs it rescued.
func (q *Queue) RescueStuckResumes(ctx context.Context, heldSince time.Time, busy func(ctx context.Context, run string) (bool, error)) (int, error) {
	stuck, err := q.stuckResumes(ctx, heldSince, 100)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, j := range stuck {
		worked, err := busy(ctx, j.run)
		if err != nil {
			return n, fmt.Errorf("rescue resume job %d: %w", j.id, err)
		}
		if worked {
			continue
		}
		ok, err := q.handBack(ctx, j.id, ResumeArgs{}.Kind(), j.attempt)
		if err != nil {
			return n, fmt.Errorf("rescue resume job %d: %w", j.id, err)
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// handBack makes a running job of kind available to the workers again, as
// a guarded transition: a job finished or taken again meanwhile (its
// attempt moved) is left alone, and false says so.
func (q *Queue) handBack(ctx context.Context, id int64, kind string, attempt int) (bool, error) {
	res, err := q.db.Exec(ctx, `UPDATE river_job SET state = 'available' WHERE id = ? AND kind = ? AND state = 'running' AND attempt = ?`,
		id, kind, attempt)
	if err != nil {
		return false, err
	}
	k, err := res.RowsAffected()
	return err == nil && k == 1, nil
}

// stuckResume is a resume job a worker took and has not finished: the run it
// decides on and the attempt the worker took.
type stuckResume struct {
	id      int64
	run     string
	attempt int
}

// stuckResumes returns up to limit resume jobs that a worker took before
// heldSince and that still read as running, oldest first.
func (q *Queue) stuckResumes(ctx context.Context, heldSince time.Time, limit int) ([]stuckResume, error) {
	runOf := "json_extract(args, '$.job.run')"
	if q.db.Dialect() == store.Postgres {
		runOf = "args->'job'->>'run'"
	}
	type row struct {
		stuckResume
		taken sql.NullTime
	}
	rows, err := store.Collect(ctx, q.db, func(sc store.Scanner) (row, error) {
		var r row
		var run sql.NullString
		err := sc.Scan(&r.id, &run, &r.attempt, &r.taken)
		r.run = run.String
		return r, err
	}, `SELECT id, `+runOf+`, attempt, attempted_at FROM river_job WHERE kind = ? AND state = 'running' ORDER BY id`, ResumeArgs{}.Kind())
	if err != nil {
		return nil, fmt.Errorf("stuck resume jobs: %w", err)
	}
	var out []stuckResume
	for _, r := range rows {
		if r.taken.Valid && r.taken.Time.Before(heldSince) && len(out) < limit {
			out = append(out, r.stuckResume)
		}
	}
	return out, nil
}
