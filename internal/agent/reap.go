package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// ReapReport counts what one reaper pass did.
type ReapReport struct {
	Requeued     int `json:"requeued"`
	DeadLettered int `json:"deadLettered"`
	// Restarted counts queued runs that had no live job (it was discarded) and got a new one.
	Restarted int `json:"restarted"`
	// ResumesRescued counts decisions of the runs API whose job a worker took
	// and never finished, handed to the workers again.
	ResumesRescued int `json:"resumesRescued"`
}

// ResumeRescuer is the optional ability of a Config.Queue to hand resume
// jobs that a worker took before heldSince and never finished back to the
// workers, but those whose run busy says is being worked (queue.Queue has it).
type ResumeRescuer interface {
	RescueStuckResumes(ctx context.Context, heldSince time.Time, busy func(ctx context.Context, run string) (bool, error)) (int, error)
}

// Reap handles runs whose lease expired: a run caught inside a
// non-idempotent write (its fence is set), a run that cannot be rebuilt from
// a stored request or a decision (an interactive start) and a run whose
// requeue budget is spent are dead-lettered (failed); any other — a decided
// turn among them — is requeued with a new job (deadLetter). The expiry is re-checked in each UPDATE, so a renewal in between wins.
// Then it gives a new job to each queued run whose job is lost, and hands
// each decision whose resume job a worker took more than a lease ago and
// left unfinished back to the workers (rescueResumes).
func (rt *Reaper) Reap(ctx context.Context) (ReapReport, error) {
	var rep ReapReport
	expired, err := rt.runs.ExpiredLeases(ctx, rt.clk.Now())
	if err != nil {
		return rep, err
	}
	for _, r := range expired {
		reason, class := deadLetter(r, rt.cfg.MaxRequeues)
		var won bool
		if reason != "" {
			won, err = rt.runs.SettleExpired(ctx, r.UUID, run.Settlement{Owner: r.LeaseOwner, Reason: reason, ErrClass: class, ErrMsg: "the run's lease expired"})
			if won {
				rep.DeadLettered++
				rt.statusEvent(ctx, r, map[string]any{"status": run.StatusFailed, "reason": reason, "errorClass": class})
			}
		} else if rt.queue != nil {
			err = rt.queue.InTx(ctx, func(tx *store.Tx) error {
				w, err := rt.runs.RequeueExpiredTx(ctx, tx, r.UUID, run.Requeuing{Owner: r.LeaseOwner, Requeues: r.RequeueCount})
				if err != nil || !w {
					return err
				}
				won = true
				return rt.queue.InsertTx(ctx, tx, r.UUID, 0)
			})
			if won && err == nil {
				rep.Requeued++
				rt.statusEvent(ctx, r, map[string]any{"status": run.StatusQueued, "requeue": r.RequeueCount + 1, "reaped": true})
			}
		}
		if err != nil {
			return rep, err
		}
	}
	n, err := rt.restartStranded(ctx)
	rep.Restarted = n
	if err != nil {
		return rep, err
	}
	rep.ResumesRescued, err = rt.rescueResumes(ctx)
	return rep, err
}

// rescueResumes hands back to the workers each resume job (a decision taken
// through the runs API, ApproveOnWorker) that a worker took more than a
// lease ago and never finished, unless its run is running: a worker that
// claimed the run holds its lease while it works the continuation, and a
// run whose lease lapsed is settled above first. Without it such a decision
// would be carried out when River rescues the job, a day later.
func (rt *Reaper) rescueResumes(ctx context.Context) (int, error) {
	rr, ok := rt.queue.(ResumeRescuer)
	if !ok {
		return 0, nil
	}
	return rr.RescueStuckResumes(ctx, rt.clk.Now().Add(-rt.cfg.Lease), func(ctx context.Context, id string) (bool, error) {
		r, err := rt.runs.Get(ctx, id)
		if errors.Is(err, run.ErrNotFound) {
			return false, nil // worked again, the decision answers not_found
		}
		return err == nil && r.Status == run.StatusRunning, err
	})
}

// restartStranded gives a new job to each queued run whose job is gone (River
// discarded it after its attempts), so no queued run waits for ever. A
// duplicate job is harmless: its pickup loses the claim.
func (rt *Reaper) restartStranded(ctx context.Context) (int, error) {
	if rt.queue == nil {
		return 0, nil
	}
	ids, err := rt.strandedRuns(ctx, 100)
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		if err := rt.queue.InTx(ctx, func(tx *store.Tx) error { return rt.queue.InsertTx(ctx, tx, id, 0) }); err != nil {
			return 0, err
		}
		r, err := rt.runs.Get(ctx, id)
		if err == nil {
			rt.statusEvent(ctx, r, map[string]any{"status": run.StatusQueued, "restarted": true})
		}
	}
	return len(ids), nil
}

// strandedRuns lists up to limit queued runs, oldest first, unchanged for
// a lease and without a job left in the queue: the run store lists the
// candidates page by page, the queue says which have no live job.
func (rt *Reaper) strandedRuns(ctx context.Context, limit int) ([]string, error) {
	const page = 200
	var ids []string
	var from run.QueuedMark
	for len(ids) < limit {
		// A queued run unchanged for a lease whose job is gone, or was taken
		// by a worker more than a lease ago that never claimed the run (it
		// died between River's fetch and the claim), gets a new job.
		held := rt.clk.Now().Add(-rt.cfg.Lease)
		marks, err := rt.runs.QueuedBefore(ctx, held, from, page)
		if err != nil {
			return nil, fmt.Errorf("stranded runs: %w", err)
		}
		if len(marks) == 0 {
			break
		}
		uuids := make([]string, len(marks))
		for i, m := range marks {
			uuids[i] = m.UUID
		}
		lost, err := rt.queue.WithoutLiveJob(ctx, uuids, held)
		if err != nil {
			return nil, fmt.Errorf("stranded runs: %w", err)
		}
		ids = append(ids, lost...)
		if len(marks) < page {
			break
		}
		from = marks[len(marks)-1]
	}
	return ids[:min(len(ids), limit)], nil
}

// deadLetter says why a run whose lease expired cannot be requeued, or ""
// when it can: a run caught inside a non-idempotent write (its fence), a
// run that is neither a decided turn (its suspended state is kept while it
// runs after the decision: it continues from there, continueDecided) nor a
// worker's run with a stored request, and one whose requeue budget is
// spent. A decided turn fenced on a write other than a content write (which
// commits with its record) is not continued either: it would run the call
// again without an approval.
func deadLetter(r run.Run, maxRequeues int) (run.Reason, string) {
	var fence struct {
		Effect tool.Effect `json:"effect"`
	}
	fenced := len(r.PendingEffect) > 0 && json.Unmarshal(r.PendingEffect, &fence) == nil
	decided := len(r.Suspended) > 0
	if fenced && (fence.Effect == tool.EffectNonIdempotentWrite || decided && fence.Effect != tool.EffectWrite) {
		return run.ReasonNotRetryable, "dead_letter_fenced_write"
	}
	if !decided && (len(r.Request) == 0 || !strings.HasPrefix(r.LeaseOwner, "worker:")) {
		return run.ReasonNotRetryable, "dead_letter_not_rehydratable"
	}
	if r.RequeueCount >= maxRequeues {
		return run.ReasonRetriesExhausted, "dead_letter_retries_exhausted"
	}
	return "", ""
}

func (rt *Reaper) statusEvent(ctx context.Context, r run.Run, payload map[string]any) {
	priv := run.PrivacyMetadata
	if cfg, err := rt.configs.Get(ctx, r.Configuration); err == nil {
		priv = privacyOf(cfg)
	}
	if _, err := rt.runs.AppendEvent(ctx, r.UUID, run.EventStatus, payload, priv); err != nil {
		rt.log.Warn("status event not stored", "run", r.UUID, "err", err)
	}
}

// ReapJob is one pass of the installation's reaper, as the queue's periodic
// job runs it (on the elected leader only): Reap, logged.
func (rt *Reaper) ReapJob(ctx context.Context) error {
	rep, err := rt.Reap(ctx)
	if err != nil {
		rt.log.Error("reaper", "err", err)
		return err
	}
	if rep != (ReapReport{}) {
		rt.log.Info("reaper", "requeued", rep.Requeued, "deadLettered", rep.DeadLettered, "restarted", rep.Restarted, "resumesRescued", rep.ResumesRescued)
	}
	return nil
}

// Release hands back, at the end of a process's stop, the runs this
// runtime still holds (their segments halted): each lease is ended in one
// guarded update (only while the run still runs under this runtime's
// lease), and one reaper pass requeues them by the reaper's rules at once
// — a worker of another process, or of this one started again, takes them
// without waiting for the lease to expire. It reports how many runs it
// released.
func (rt *Reaper) Release(ctx context.Context) (int, error) {
	n, err := rt.runs.ExpireLeasesOf(ctx, rt.cfg.Identity)
	if err != nil || n == 0 {
		return n, err
	}
	if _, err := rt.Reap(ctx); err != nil {
		return n, fmt.Errorf("release %d runs: %w", n, err)
	}
	return n, nil
}
