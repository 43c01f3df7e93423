package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"waymark/internal/access"
	"waymark/internal/fault"
	"waymark/internal/run"
	"waymark/internal/store"
)

// Resumed turns on the queue. A decision or an input
// taken through the runs API is carried out by a worker, on whichever
// process has chat workers, as the chat's card answers are: the request
// runs the checks that only read (so an obvious refusal answers at once),
// inserts a resume job and waits until a worker carried it out. The worker
// runs Approve or SubmitInput — every check again, as stored then, and the
// claim that decides between two racing decisions — and records the
// outcome (a refusal's wire code and message, or nothing) as the job's
// output. The request answers that refusal, or the run as the decider sees
// it after the decision.

// DefaultResumeWait is how long a decision's request waits for its resumed
// turn by default (Config.ResumeWait).
const DefaultResumeWait = 30 * time.Second

// Resumer is the optional ability of a Config.Queue to carry resumed turns
// to a worker (queue.Queue has it). Without it ApproveOnWorker and
// SubmitInputOnWorker carry them out in the caller, as Approve and
// SubmitInput.
type Resumer interface {
	InTx(ctx context.Context, fn func(tx *store.Tx) error) error
	// InsertResumeTx inserts a resume job with payload in tx and returns its id.
	InsertResumeTx(ctx context.Context, tx *store.Tx, payload any) (int64, error)
	// ResumeOutcome reports whether job id finished and the output it
	// recorded (nil when every attempt failed).
	ResumeOutcome(ctx context.Context, id int64) (output json.RawMessage, done bool, err error)
}

// resumeJob is a decision or an input to carry out, as the queue stores it.
// It carries no secret: the actor's uid, the run, and what the actor sent.
type resumeJob struct {
	// Ticket names the waiting request within its process, so a worker of
	// the same process hands it the result itself (resumeWaits).
	Ticket   string    `json:"ticket"`
	Run      string    `json:"run"`
	Actor    int64     `json:"actor"`
	Decision *Decision `json:"decision,omitempty"`
	Input    *Input    `json:"input,omitempty"`
}

// resumeOutcome is the output a resume job records: the refusal's wire code
// and client message, or nothing when the decision was carried out.
type resumeOutcome struct {
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// ApproveOnWorker is Approve carried out by a worker of any process.
// It answers Approve's read-only refusals itself, then
// inserts the decision as a resume job and waits for it: it returns what
// Approve returned on the worker — a refusal (the claim lost to another
// decision is ErrNotWaiting), or the run as actor sees it after the
// decision. Worked by another process, that status carries the answer only
// where the run stores it (privacy full). Past Config.ResumeWait it returns
// the run as it is then, possibly still running. When ctx ends first it
// returns ctx's error; the decision is carried out all the same. Without a
// Resumer it is Approve.
func (rt *Decider) ApproveOnWorker(ctx context.Context, actor int64, id string, d Decision) (Result, error) {
	rq, ok := rt.queue.(Resumer)
	if !ok {
		return rt.Approve(ctx, actor, id, d)
	}
	if err := d.validate(); err != nil {
		return Result{}, err
	}
	rctx, end := rt.db.ReadScope(ctx)
	c, err := rt.checkApproval(rctx, actor, id, d)
	end()
	if err != nil {
		return Result{}, err
	}
	return rt.resumeOnWorker(ctx, rq, c.actor, c.viewer, resumeJob{Run: id, Actor: actor, Decision: &d})
}

// SubmitInputOnWorker is SubmitInput carried out by a worker of any
// process, as ApproveOnWorker is Approve.
func (rt *Decider) SubmitInputOnWorker(ctx context.Context, actor int64, id string, in Input) (Result, error) {
	rq, ok := rt.queue.(Resumer)
	if !ok {
		return rt.SubmitInput(ctx, actor, id, in)
	}
	if in.TurnDigest == "" {
		return Result{}, invalidf("turnDigest: required")
	}
	rctx, end := rt.db.ReadScope(ctx)
	c, err := rt.checkInput(rctx, actor, id, in)
	end()
	if err != nil {
		return Result{}, err
	}
	return rt.resumeOnWorker(ctx, rq, c.actor, ownerViewer, resumeJob{Run: id, Actor: actor, Input: &in})
}

// The poll of a resume job worked by another process: first after
// resumePollFirst, then twice as long each time, up to resumePollMax.
const (
	resumePollFirst = 5 * time.Millisecond
	resumePollMax   = 200 * time.Millisecond
)

// resumeOnWorker inserts j and waits for its outcome: handed over by a
// worker of this process, or read from the job's row (another process).
// a and v are the actor and how much it saw of the run before the decision:
// an approver no longer sees a run that left waiting, yet the answer shows
// it as it is after the decision. The waits are in real time, not the
// runtime's clock: they bound a request, they decide nothing.
func (rt *Decider) resumeOnWorker(ctx context.Context, rq Resumer, a *access.Actor, v viewer, j resumeJob) (Result, error) {
	j.Ticket = uuid.NewString()
	got := rt.resumes.add(j.Ticket)
	defer rt.resumes.remove(j.Ticket)
	var job int64
	err := rq.InTx(ctx, func(tx *store.Tx) error {
		var err error
		job, err = rq.InsertResumeTx(ctx, tx, j)
		return err
	})
	if err != nil {
		return Result{}, fmt.Errorf("decision on run %s: %w", j.Run, err)
	}
	limit := time.NewTimer(rt.cfg.ResumeWait)
	defer limit.Stop()
	every := resumePollFirst
	poll := time.NewTimer(every)
	defer poll.Stop()
	for {
		select {
		case r := <-got:
			return r.res, r.err
		case <-ctx.Done():
			return Result{}, ctx.Err()
		case <-limit.C:
			rt.log.Info("decision not carried out within the wait; answering the run as it is", "run", j.Run, "job", job)
			return rt.viewNow(ctx, a, v, j.Run)
		case <-poll.C:
		}
		out, done, err := rq.ResumeOutcome(ctx, job)
		if err != nil {
			return Result{}, fmt.Errorf("decision on run %s: %w", j.Run, err)
		}
		if !done {
			every = min(2*every, resumePollMax)
			poll.Reset(every)
			continue
		}
		select {
		case r := <-got: // worked here: the result as Approve returned it
			return r.res, r.err
		default:
		}
		if out == nil {
			return Result{}, fmt.Errorf("decision on run %s: resume job %d failed every attempt", j.Run, job)
		}
		var o resumeOutcome
		if err := json.Unmarshal(out, &o); err != nil {
			return Result{}, fmt.Errorf("decision on run %s: outcome of job %d: %w", j.Run, job, err)
		}
		if o.Code != "" {
			return Result{}, fault.Rebuild(o.Code, o.Message)
		}
		return rt.viewNow(ctx, a, v, j.Run)
	}
}

// viewNow is run id as a, with viewer v, sees it now.
func (rt *Decider) viewNow(ctx context.Context, a *access.Actor, v viewer, id string) (Result, error) {
	ctx, end := rt.db.ReadScope(ctx)
	defer end()
	r, err := rt.runs.Get(ctx, id)
	if errors.Is(err, run.ErrNotFound) {
		return Result{}, ErrNotFound
	}
	if err != nil {
		return Result{}, err
	}
	st := rt.view(ctx, a, r, v)
	return Result{UUID: id, Status: &st}, nil
}

// WorkResume carries out a resume job (the queue's handler): Approve or
// SubmitInput as the job's actor, with every check as stored now. A refusal
// — the run is gone, decided already, or the claim went to another decision
// — changes nothing and is the outcome; a failure without a fault (a store
// error before the claim) is returned, and River retries the job.
func (rt *Decider) WorkResume(ctx context.Context, payload json.RawMessage) (any, error) {
	var j resumeJob
	if err := json.Unmarshal(payload, &j); err != nil {
		rt.log.Error("resume job unreadable; dropped", "err", err)
		return resumeOutcome{Code: "internal", Message: "the decision cannot be read"}, nil
	}
	var res Result
	var err error
	switch {
	case j.Decision != nil:
		res, err = rt.Approve(ctx, j.Actor, j.Run, *j.Decision)
	case j.Input != nil:
		res, err = rt.SubmitInput(ctx, j.Actor, j.Run, *j.Input)
	default:
		err = invalidf("the resume job carries neither a decision nor an input")
	}
	f, msg, refused := fault.Of(err)
	if err != nil && (!refused || f.Kind() == fault.Internal) {
		return nil, fmt.Errorf("resume run %s: %w", j.Run, err)
	}
	rt.resumes.deliver(j.Ticket, resumed{res: res, err: err})
	if err != nil {
		return resumeOutcome{Code: f.Code(), Message: msg}, nil
	}
	return resumeOutcome{}, nil
}

// resumed is what Approve or SubmitInput returned on a worker.
type resumed struct {
	res Result
	err error
}

// resumeWaits are the requests of this process waiting for their resume
// jobs, by ticket. The zero value is ready.
type resumeWaits struct {
	mu      sync.Mutex // guards waiting
	waiting map[string]chan resumed
}

func (w *resumeWaits) add(ticket string) <-chan resumed {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiting == nil {
		w.waiting = map[string]chan resumed{}
	}
	ch := make(chan resumed, 1)
	w.waiting[ticket] = ch
	return ch
}

func (w *resumeWaits) remove(ticket string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.waiting, ticket)
}

// deliver hands r to the request waiting for ticket, if it is one of this
// process and still waits.
func (w *resumeWaits) deliver(ticket string, r resumed) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.waiting[ticket]; ok {
		select {
		case ch <- r:
		default:
		}
	}
}
