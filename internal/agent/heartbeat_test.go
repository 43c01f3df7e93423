package agent_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"waymark/internal/agent"
	"waymark/internal/llm/llmtest"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// beating is e's runtime again with a heartbeat of a few milliseconds; each
// won renewal is reported on the returned channel.
func (e *env) beating(t *testing.T) (*agent.Runtime, chan string) {
	t.Helper()
	beats := make(chan string, 1)
	cfg := e.cfg
	cfg.Heartbeat = 5 * time.Millisecond
	cfg.Test.AfterBeat = func(id string) {
		select {
		case beats <- id:
		default:
		}
	}
	return e.runtime(t, cfg), beats
}

// nextBeat waits for a renewal made after the call (at most 10 s).
func nextBeat(t *testing.T, beats chan string) {
	t.Helper()
	select {
	case <-beats: // possibly from before: drop it
	default:
	}
	select {
	case <-beats:
	case <-time.After(10 * time.Second):
		t.Fatal("no lease renewal within 10s")
	}
}

// A segment waiting on the model renews its lease by a
// heartbeat, so however long the model takes — here two and a half leases
// on the injected clock — the reaper leaves the run alone, and it completes.
func TestASegmentWaitingOnTheModelKeepsItsLeaseByHeartbeat(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		arrived, hold := make(chan struct{}), make(chan struct{})
		e := setup(t, db, false, llmtest.Reply{Content: "fertig", Arrived: arrived, Hold: hold})
		rt, beats := e.beating(t)
		done := make(chan agent.Result, 1)
		go func() {
			res, err := rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Hallo")})
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		<-arrived
		for range 3 {
			e.clk.Advance(50 * time.Second)
			nextBeat(t, beats)
		}
		rep, err := rt.Reap(ctx)
		if err != nil || rep != (agent.ReapReport{}) {
			t.Fatalf("Reap after 150s of a waiting model call = %+v, %v; want nothing reaped", rep, err)
		}
		close(hold)
		res := <-done
		if s := e.status(t, erika, res.UUID); s.Status != run.StatusCompleted || res.Answer != "fertig" {
			t.Fatalf("run = %s/%s answer %q, want completed with the answer", s.Status, s.TerminationReason, res.Answer)
		}
	})
}

// A segment whose run was taken from it while it waits on
// the model — cancelled here — learns it at the next beat and stops the
// call instead of waiting for the model; the run stays cancelled.
func TestASegmentThatLostItsRunStopsWaitingOnTheModel(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		arrived := make(chan struct{})
		e := setup(t, db, false, llmtest.Reply{Content: "nie", Arrived: arrived, Hold: make(chan struct{})})
		rt, _ := e.beating(t)
		done := make(chan agent.Result, 1)
		go func() {
			res, _ := rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Hallo")})
			done <- res
		}()
		<-arrived
		var id string
		if err := db.QueryRow(ctx, "SELECT uuid FROM runs WHERE status = 'running'").Scan(&id); err != nil {
			t.Fatal(err)
		}
		if ok, err := rt.Cancel(ctx, erika, id); !ok || err != nil {
			t.Fatalf("Cancel = %v, %v", ok, err)
		}
		select {
		case res := <-done:
			if s := e.status(t, erika, res.UUID); s.Status != run.StatusCancelled {
				t.Fatalf("run = %s, want cancelled", s.Status)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the segment still waits on the model 10s after losing its run")
		}
	})
}

// An interactive start records its run together with what
// the caller writes in StartTx (the chat: the conversation's pending run);
// when StartTx refuses, no run exists and no model is called — a crash can
// never leave a run its conversation does not name.
func TestARunWhoseStartTxRefusesIsNeverCreated(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, text("nie"))
		refused := errors.New("claim lost")
		_, err := e.rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Hallo"),
			StartTx: func(context.Context, *store.Tx, string) error { return refused }})
		if !errors.Is(err, refused) {
			t.Fatalf("Run with a refusing StartTx = %v, want its error", err)
		}
		var n int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM runs").Scan(&n); err != nil || n != 0 {
			t.Errorf("runs after the refused start = %d, %v; want 0", n, err)
		}
		if n := len(e.srv.Requests()); n != 0 {
			t.Errorf("model calls = %d, want 0", n)
		}
	})
}
