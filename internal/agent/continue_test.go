package agent_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"waymark/internal/agent"
	"waymark/internal/invariant"
	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// A resumed turn whose worker dies outside a write — here between the two
// approved writes of one card, after the first committed — was
// dead-lettered (not_retryable: "not rehydratable"). It is requeued by the
// reaper and continued from the stored run: the first write is not made
// again, the second is made once, and the model loop goes on to the end.
// At privacy none, where a tool event keeps no call id, as at full.
func TestDecidedTurnWhoseWorkerDiedBetweenItsWritesIsContinuedAndWritesEachOnce(t *testing.T) {
	for _, privacy := range []string{"full", "none"} {
		t.Run(privacy, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				ctx := context.Background()
				two := llmtest.Reply{ToolCalls: []llm.ToolCall{
					{ID: "c1", Name: "update_page_metadata", Arguments: `{"page": 1, "fields": {"description": "` + description + `"}}`},
					{ID: "c2", Name: "update_page_metadata", Arguments: `{"page": 1, "fields": {"seoTitle": "Nordlicht"}}`},
				}, Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 5}}
				e := setup(t, db, false, two, text("Both fields are set."))
				if _, err := db.Exec(ctx, "UPDATE configurations SET privacy = ? WHERE uid = ?", privacy, cfgPlain); err != nil {
					t.Fatal(err)
				}
				e.withQueue(t, 0)
				id, err := e.rt.Enqueue(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
				if err != nil {
					t.Fatal(err)
				}
				if err := e.rt.RunQueued(ctx, id); err != nil {
					t.Fatal(err)
				}
				s := e.status(t, erika, id)
				if s.Status != run.StatusWaitingForApproval {
					t.Fatalf("run = %s, want waiting for approval", s.Status)
				}
				var writes atomic.Int32
				started, release := make(chan struct{}), make(chan struct{})
				e.beforeWrite = func() {
					if writes.Add(1) == 2 {
						close(started)
						<-release // the worker "dies" before the second write: nothing renews its lease
					}
				}
				done := make(chan error, 1)
				go func() {
					_, err := e.rt.Approve(ctx, erika, id, agent.Decision{Approve: true, TurnDigest: s.Pending.TurnDigest})
					done <- err
				}()
				<-started
				e.clk.Advance(agent.DefaultLease + time.Second)
				rep, err := e.rt.Reap(ctx)
				if err != nil || rep.Requeued != 1 || rep.DeadLettered != 0 {
					t.Fatalf("Reap = %+v, %v; want the decided turn requeued, not dead-lettered", rep, err)
				}
				close(release)
				if err := <-done; err != nil {
					t.Fatalf("the dead worker's Approve = %v", err)
				}
				if got := e.field(t, "pages", 1, "seoTitle"); got != "" {
					t.Fatalf("the dead worker wrote the second field after losing the run: %q", got)
				}
				if err := e.rt.RunQueued(ctx, id); err != nil {
					t.Fatal(err)
				}
				got := e.status(t, erika, id)
				if got.Status != run.StatusCompleted {
					t.Fatalf("continued run = %s/%s (%s), want completed", got.Status, got.TerminationReason, got.ErrorClass)
				}
				if e.field(t, "pages", 1, "description") != description || e.field(t, "pages", 1, "seoTitle") != "Nordlicht" {
					t.Errorf("after the continuation: description %q, seoTitle %q", e.field(t, "pages", 1, "description"), e.field(t, "pages", 1, "seoTitle"))
				}
				for _, f := range []string{"description", "seoTitle"} {
					var n int
					if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM record_history WHERE run_uuid = ? AND field = ?", id, f).Scan(&n); err != nil {
						t.Fatal(err)
					}
					if n != 1 {
						t.Errorf("%s written %d times, want once", f, n)
					}
				}
				if n := len(e.srv.Requests()); n != 2 {
					t.Errorf("the model was called %d times, want 2 (the card, then once after the continued writes)", n)
				}
				vs, err := invariant.New(db, nil).Check(ctx)
				if err != nil {
					t.Fatal(err)
				}
				// The writes' invariants; the request event's privacy at none
				// is another matter (the checker keeps nothing of it there).
				var writesBroken []invariant.Violation
				for _, v := range vs {
					if v.Check == invariant.WriteOnce || v.Check == invariant.ApprovedWrite {
						writesBroken = append(writesBroken, v)
					}
				}
				if len(writesBroken) > 0 {
					t.Errorf("invariant violations:%s", invariant.Describe(writesBroken))
				}
			})
		})
	}
}

// A decided turn whose worker died between the claim of a re-suspension
// (the card's preview changed) and the suspension itself has no decision
// recorded: continued, it waits again for the decision it waited for,
// under the same turn digest, and writes nothing.
func TestDecidedTurnWithoutARecordedDecisionWaitsAgainForIt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, cycleReplies()...)
		e.withQueue(t, 0)
		id, err := e.rt.Enqueue(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.rt.RunQueued(ctx, id); err != nil {
			t.Fatal(err)
		}
		before := e.status(t, erika, id)
		// The claim of a resumed segment, and then its worker is gone.
		if won, err := e.runs.Resume(ctx, id, run.Resumption{From: run.StatusWaitingForApproval, Owner: "resume:gone:1", Lease: time.Second}); err != nil || !won {
			t.Fatalf("Resume = %v, %v", won, err)
		}
		e.clk.Advance(2 * time.Second)
		if rep, err := e.rt.Reap(ctx); err != nil || rep.Requeued != 1 {
			t.Fatalf("Reap = %+v, %v; want the run requeued", rep, err)
		}
		if err := e.rt.RunQueued(ctx, id); err != nil {
			t.Fatal(err)
		}
		after := e.status(t, erika, id)
		if after.Status != run.StatusWaitingForApproval || after.Pending == nil || after.Pending.TurnDigest != before.Pending.TurnDigest {
			t.Fatalf("continued without a decision: %s %+v, want waiting for the same turn %s", after.Status, after.Pending, before.Pending.TurnDigest)
		}
		if got := e.field(t, "pages", 1, "description"); got != "" {
			t.Errorf("the description was written without a decision: %q", got)
		}
		if _, err := e.rt.Approve(ctx, erika, id, agent.Decision{Approve: true, TurnDigest: after.Pending.TurnDigest}); err != nil {
			t.Fatal(err)
		}
		if s := e.status(t, erika, id); s.Status != run.StatusCompleted || e.field(t, "pages", 1, "description") != description {
			t.Fatalf("after the approval: %s, description %q", s.Status, e.field(t, "pages", 1, "description"))
		}
	})
}
