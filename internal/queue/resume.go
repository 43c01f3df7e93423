package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"waymark/internal/store"
)

// ResumeHandler carries out a resume job — a decision on a waiting run
// taken through the runs API — from the payload it was inserted with, and
// returns the outcome to record for the request that waits for it (issue 15
// item 1). It returns an error only for a fault before anything changed:
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
	out, err := w.q.h.Resume.WorkResume(ctx, job.Args.Job)
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
