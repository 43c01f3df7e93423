package chat

import (
	"context"
	"encoding/json"
	"errors"
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

// Work carries out one chat job (the queue's handler). A job whose claim no
// longer holds — the conversation was released as lost, or moved on — does
// nothing. It returns an error only when nothing was done.
func (s *Service) Work(ctx context.Context, payload json.RawMessage) error {
	var j job
	if err := json.Unmarshal(payload, &j); err != nil {
		s.log.Error("chat job unreadable; dropped", "err", err)
		return nil
	}
	defer s.worked()
	return s.work(ctx, j)
}

func (s *Service) work(ctx context.Context, j job) error {
	var r row
	err := s.outlast(ctx, "read conversation", func() (err error) {
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
		return s.turn(ctx, r, j.At)
	case opDecide, opSubmit:
	default:
		s.log.Error("chat job of unknown kind; dropped", "conversation", r.ID, "op", j.Op)
		return nil
	}
	before := r
	before.Status, before.PendingRun = j.From, j.Run
	if err := before.setDecision(j.Decision); err != nil {
		s.fail(ctx, r, err)
		return nil
	}
	switch {
	case j.Op == opDecide && before.Card != nil:
		s.decide(ctx, before, *before.Card, j.Answer, j.Instruction, j.After)
	case j.Op == opSubmit && before.Question != nil:
		s.submit(ctx, before, j.Values)
	default:
		s.unclaim(ctx, before)
	}
	return nil
}

// worked wakes Wait.
func (s *Service) worked() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// waitLimit bounds Wait.
const waitLimit = time.Minute

// Wait waits until no turn or decision is running or waiting to run (tests):
// the service's goroutines and, with a queue, every chat job.
func (s *Service) Wait() {
	s.wg.Wait()
	if s.queue == nil {
		return
	}
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		n, err := s.queue.ChatPending(context.Background(), s.db)
		if err != nil || n == 0 {
			return
		}
		select {
		case <-s.wake:
		case <-tick.C: // a job worked by another process, or finished by River's completer
		case <-deadline.C:
			return
		}
	}
}
