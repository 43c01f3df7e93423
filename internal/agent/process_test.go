package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"waymark/internal/agent"
	"waymark/internal/content"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// finishedRun stores a completed run of actor, as a predecessor to name.
func (e *env) finishedRun(t *testing.T, actor int64) string {
	t.Helper()
	ctx := context.Background()
	id := uuid.NewString()
	if err := e.runs.Create(ctx, run.Run{UUID: id, Configuration: cfgPlain, Initiator: actor, Status: run.StatusRunning,
		LeaseOwner: "seed", LeaseExpiresAt: e.clk.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if won, err := e.runs.Settle(ctx, id, run.Settlement{Owner: "seed", Status: run.StatusCompleted, Reason: run.ReasonCompleted, Answer: "done"}); err != nil || !won {
		t.Fatalf("settle %s = %v, %v", id, won, err)
	}
	return id
}

// L2.8: a runtime built without a preparer refuses every invocation and
// every continuation — interactive and queued — before the model is asked.
func TestRuntimeWithoutPreparerRefusesEveryInvocationAndContinuation(t *testing.T) {
	requests := []struct {
		name string
		req  func(e *env, t *testing.T) agent.Request
	}{
		{"invocation", func(e *env, t *testing.T) agent.Request {
			return agent.Request{Configuration: cfgPlain, Messages: user("SEO please"),
				Invocation: &agent.Invocation{Skill: 1, Subject: &content.Ref{Table: "pages", UID: 1}}}
		}},
		{"continuation", func(e *env, t *testing.T) agent.Request {
			return agent.Request{Configuration: cfgPlain, Messages: user("go on"), Predecessor: e.finishedRun(t, erika)}
		}},
		{"invocation naming a predecessor", func(e *env, t *testing.T) agent.Request {
			return agent.Request{Configuration: cfgPlain, Messages: user("SEO please"),
				Invocation: &agent.Invocation{Skill: 1}, Predecessor: e.finishedRun(t, erika)}
		}},
	}
	paths := []struct {
		name string
		run  func(e *env, t *testing.T, req agent.Request) string
	}{
		{"interactive", func(e *env, t *testing.T, req agent.Request) string {
			res, err := e.rt.Run(context.Background(), erika, req)
			if err != nil {
				t.Fatalf("Run = %v, want a refused run", err)
			}
			return res.UUID
		}},
		{"queued", func(e *env, t *testing.T, req agent.Request) string {
			e.withQueue(t, 0)
			id, err := e.rt.Enqueue(context.Background(), erika, req)
			if err != nil {
				t.Fatalf("Enqueue = %v", err)
			}
			if err := e.rt.RunQueued(context.Background(), id); err != nil {
				t.Fatalf("RunQueued = %v, want the run settled", err)
			}
			return id
		}},
	}
	for _, rq := range requests {
		for _, p := range paths {
			t.Run(rq.name+"/"+p.name, func(t *testing.T) {
				storetest.Each(t, func(t *testing.T, db *store.DB) {
					e := setup(t, db, false, text("must not be sent"))
					id := p.run(e, t, rq.req(e, t))
					s := e.status(t, erika, id)
					if s.Status != run.StatusFailed || s.TerminationReason != run.ReasonPolicyDenied ||
						s.ErrorClass != "process_invocation_refused" || s.Error != "no_preparer" || s.Refusal != "no_preparer" {
						t.Errorf("status = %s/%s class %q error %q refusal %q; want failed/policy_denied process_invocation_refused no_preparer",
							s.Status, s.TerminationReason, s.ErrorClass, s.Error, s.Refusal)
					}
					if s.FinishedAt == nil {
						t.Error("refused run has no finishedAt")
					}
					if n := len(e.srv.Requests()); n != 0 {
						t.Errorf("model was called %d times, want never", n)
					}
					if k := e.kinds(t, id); k[run.EventLineage] != 0 || k[run.EventNotice] != 1 {
						t.Errorf("events = %v, want one refusal notice and no lineage", k)
					}
				})
			})
		}
	}
}

// A plain request (no invocation, no predecessor) still runs without a preparer.
func TestRuntimeWithoutPreparerRunsPlainRequests(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := setup(t, db, false, text("Hello."))
		res, err := e.rt.Run(context.Background(), erika, agent.Request{Configuration: cfgPlain, Messages: user("Hi")})
		if err != nil {
			t.Fatal(err)
		}
		if s := e.status(t, erika, res.UUID); s.Status != run.StatusCompleted || s.Refusal != "" {
			t.Errorf("plain run = %s refusal %q, want completed without refusal", s.Status, s.Refusal)
		}
		if n := len(e.srv.Requests()); n != 1 {
			t.Errorf("model calls = %d, want 1", n)
		}
	})
}
