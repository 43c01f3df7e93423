package agent_test

import (
	"context"
	"errors"
	"testing"

	"waymark/internal/agent"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// WaitsFor says what Status's Pending says about a decision — the run waits
// for exactly the turn with that digest — read from the run's row alone: yes
// for the waiting turn, no for another digest and once the turn was decided,
// and ErrNotFound for a run the actor may not see (as Status).
func TestWaitsForAnswersAsTheStatusPendingTurnDoes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, cycleReplies()...)
		res, err := e.rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
		if err != nil {
			t.Fatal(err)
		}
		s := e.status(t, erika, res.UUID)
		if s.Status != run.StatusWaitingForApproval || s.Pending == nil {
			t.Fatalf("after start: %+v", s)
		}
		digest := s.Pending.TurnDigest
		waits := func(actor int64, d string) (bool, error) { return e.rt.WaitsFor(ctx, actor, res.UUID, d) }
		if ok, err := waits(erika, digest); err != nil || !ok {
			t.Errorf("WaitsFor(waiting turn) = %v, %v; want true", ok, err)
		}
		if ok, err := waits(erika, digest+"x"); err != nil || ok {
			t.Errorf("WaitsFor(another digest) = %v, %v; want false", ok, err)
		}
		if _, err := waits(otto, digest); !errors.Is(err, agent.ErrNotFound) {
			t.Errorf("WaitsFor as a user who may not see the run = %v, want ErrNotFound", err)
		}
		if _, err := e.rt.WaitsFor(ctx, erika, "no-such-run", digest); !errors.Is(err, agent.ErrNotFound) {
			t.Errorf("WaitsFor(unknown run) = %v, want ErrNotFound", err)
		}
		if _, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: digest}); err != nil {
			t.Fatal(err)
		}
		if ok, err := waits(erika, digest); err != nil || ok {
			t.Errorf("WaitsFor(decided turn) = %v, %v; want false (status %s)", ok, err, e.status(t, erika, res.UUID).Status)
		}
	})
}
