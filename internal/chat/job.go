package chat

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"waymark/internal/store"
)

// Queue carries the chat's jobs to whichever process has chat workers
// (queue.Queue implements it).
type Queue interface {
	// InTx begins the transaction InsertChatTx inserts in (queue.Queue.InTx).
	InTx(ctx context.Context, fn func(tx *store.Tx) error) error
	InsertChatTx(ctx context.Context, tx *store.Tx, payload any) error
	// ChatPending counts the chat jobs not finished yet.
	ChatPending(ctx context.Context, db store.Querier) (int, error)
	// ChatJobWaiting reports whether a chat job whose payload has field =
	// value waits to be worked.
	ChatJobWaiting(ctx context.Context, field string, value int64, heldSince time.Time) (bool, error)
}

// The operations of a chat job.
const (
	opTurn   = "turn"   // run the turn of a recorded message
	opDecide = "decide" // carry out a recorded card answer
	opSubmit = "submit" // carry out a recorded answer to a question
)

// job is a recorded message or decision to carry out, as the queue stores
// it: what the request read, so the worker (any process) acts on exactly
// that. It carries no secret and no pin.
type job struct {
	Op           string `json:"op"`
	Conversation int64  `json:"conversation"`
	// At is the time of the claim the request made (the conversation's
	// updated_at): the job acts only while that claim still holds.
	At int64 `json:"at"`
	// From and Decision are the status and the card column the request read
	// (decide, submit): the decision handed back if the runtime refuses it.
	From     Status          `json:"from,omitempty"`
	Decision string          `json:"decision,omitempty"`
	Run      string          `json:"run,omitempty"`
	Answer   string          `json:"answer,omitempty"`
	Values   json.RawMessage `json:"values,omitempty"`
	// After is how many messages the conversation had once the claim
	// added the editor's answer (decide): the decided card's outcome is
	// keyed by it, as a recovery that settles the card counts them, so a
	// job that comes back after a recovery settled the turn — messages
	// added since — records the card no second time. Zero (a job of an
	// older version): counted when the card is settled.
	After int64 `json:"after,omitempty"`
	// Instruction is a variant's wish for the model (decide).
	Instruction string `json:"instruction,omitempty"`
}

// jobs records each claimed message or decision together with its job, and
// carries the job out: on the queue, or — without one — on a goroutine of
// its own once the claim committed (commit). It owns those goroutines.
type jobs struct {
	db    *store.DB
	queue Queue // nil: jobs run on the service's goroutines
	// work carries out a committed job on a service goroutine (no queue).
	work func(ctx context.Context, j job) error

	ctx    context.Context // ends at close: the goroutines' context
	cancel context.CancelFunc
	wg     sync.WaitGroup // guards nothing; counts running jobs
	wake   chan struct{}  // a chat job finished (wait)
}

func newJobs(db *store.DB, queue Queue, work func(ctx context.Context, j job) error) *jobs {
	ctx, cancel := context.WithCancel(context.Background())
	return &jobs{db: db, queue: queue, work: work, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1)}
}

// committer is what a part that claims a conversation needs of the jobs:
// the claim and the job that carries it out, committed together.
type committer interface {
	commit(ctx context.Context, j *job, fn func(tx *store.Tx) (bool, error)) (bool, error)
}

var _ committer = (*jobs)(nil)

// commit runs fn and, when it won, records j with it in one transaction
// (as fn left it: fn may fill in what only its transaction knows). Without a
// queue, j runs on a service goroutine once committed.
func (q *jobs) commit(ctx context.Context, j *job, fn func(tx *store.Tx) (bool, error)) (bool, error) {
	in := q.db.InTx
	if q.queue != nil {
		in = q.queue.InTx
	}
	var won bool
	err := in(ctx, func(tx *store.Tx) error {
		var err error
		if won, err = fn(tx); err != nil || !won {
			return err
		}
		if q.queue != nil {
			return q.queue.InsertChatTx(ctx, tx, *j)
		}
		return nil
	})
	if err == nil && won && q.queue == nil {
		q.wg.Add(1)
		go func() {
			defer q.wg.Done()
			_ = q.work(q.ctx, *j)
		}()
	}
	return won, err
}

// close stops the goroutines' context and waits for them.
func (q *jobs) close() {
	q.cancel()
	q.wg.Wait()
}

// worked wakes wait.
func (q *jobs) worked() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// waitLimit bounds Wait.
const waitLimit = time.Minute

// wait waits until no job runs or waits to run: the goroutines and, with a
// queue, every chat job.
func (q *jobs) wait() {
	q.wg.Wait()
	if q.queue == nil {
		return
	}
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		n, err := q.queue.ChatPending(context.Background(), q.db)
		if err != nil || n == 0 {
			return
		}
		select {
		case <-q.wake:
		case <-tick.C: // a job worked by another process, or finished by River's completer
		case <-deadline.C:
			return
		}
	}
}

// Work carries out one chat job (the queue's handler). A job whose claim no
// longer holds — the conversation was released as lost, or moved on — does
// nothing. It returns an error only when nothing was done.
func (s *Service) Work(ctx context.Context, payload json.RawMessage) error {
	var j job
	if err := json.Unmarshal(payload, &j); err != nil {
		s.log.Error("chat job unreadable; dropped", "err", err)
		return nil
	}
	defer s.jobs.worked()
	return s.work(ctx, j)
}

// work hands job j to the part that carries it out: a turn (turns), a card's
// decision or a question's answer (decisions).
func (s *Service) work(ctx context.Context, j job) error {
	var r row
	err := outlast(ctx, s.log, "read conversation", func() (err error) {
		r, err = getRow(ctx, s.db, j.Conversation)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if r.Status != Processing || r.UpdatedAt.UnixMicro() != j.At {
		s.log.Info("chat job no longer holds its claim; dropped", "conversation", r.ID, "op", j.Op)
		return nil
	}
	switch j.Op {
	case opTurn:
		return s.turns.turn(ctx, r, j.At)
	case opDecide, opSubmit:
	default:
		s.log.Error("chat job of unknown kind; dropped", "conversation", r.ID, "op", j.Op)
		return nil
	}
	before := r
	before.Status, before.PendingRun = j.From, j.Run
	if err := before.setDecision(j.Decision); err != nil {
		s.settle.fail(ctx, r, err)
		return nil
	}
	switch {
	case j.Op == opDecide && before.Card != nil:
		s.decisions.decide(ctx, before, *before.Card, j.Answer, j.Instruction, j.After)
	case j.Op == opSubmit && before.Question != nil:
		s.decisions.submit(ctx, before, j.Values)
	default:
		s.settle.unclaim(ctx, before)
	}
	return nil
}

// Wait waits until no turn or decision is running or waiting to run (tests):
// the service's goroutines and, with a queue, every chat job.
func (s *Service) Wait() { s.jobs.wait() }
