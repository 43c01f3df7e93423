package agent_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"waymark/internal/agent"
	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/queue"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	"waymark/internal/tool"
)

// withQueue wires a River queue (workers off unless asked) into the runtime.
func (e *env) withQueue(t testing.TB, workers int) *queue.Queue {
	t.Helper()
	return e.withQueueOf(t, queue.Config{Workers: workers}, func(rt *agent.Runtime) queue.Handlers { return queue.Handlers{Runs: rt} })
}

// withQueueOf wires a River queue of cfg (its poll 20 ms) into the runtime
// and, when cfg asks for workers, starts them on the handlers of the new
// runtime.
func (e *env) withQueueOf(t testing.TB, cfg queue.Config, handlers func(rt *agent.Runtime) queue.Handlers) *queue.Queue {
	t.Helper()
	cfg.PollInterval = 20 * time.Millisecond
	q, err := queue.New(e.db, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.cfg.Queue = q
	e.rt = e.runtime(t, e.cfg)
	if cfg.Workers > 0 || cfg.ChatWorkers > 0 {
		if err := q.Start(context.Background(), handlers(e.rt)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = q.Stop(context.Background()) })
	}
	return q
}

// waitStatus waits (with a deadline) until the run leaves the given statuses.
func (e *env) waitStatus(t *testing.T, id string, not ...run.Status) run.Run {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := e.runs.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		busy := false
		for _, s := range not {
			busy = busy || r.Status == s
		}
		if !busy {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s still %s after 20s", id, r.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestQueuedRunIsWorkedByRiverAndSuspends(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, cycleReplies()...)
		e.withQueue(t, 1)
		id, err := e.rt.Enqueue(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
		if err != nil {
			t.Fatal(err)
		}
		r := e.waitStatus(t, id, run.StatusQueued, run.StatusRunning)
		if r.Status != run.StatusWaitingForApproval {
			t.Fatalf("queued run ended %s/%s: %s", r.Status, r.Reason, r.ErrorMessage)
		}
		s := e.status(t, erika, id)
		if _, err := e.rt.Approve(ctx, erika, id, agent.Decision{Approve: true, TurnDigest: s.Pending.TurnDigest}); err != nil {
			t.Fatal(err)
		}
		if s := e.status(t, erika, id); s.Status != run.StatusCompleted || e.field(t, "pages", 1, "description") != description {
			t.Fatalf("after approval: %+v", s)
		}
	})
}

func TestQueuedRequestIsCheckedAtPickupNotAtEnqueue(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, cycleReplies()...)
		e.withQueue(t, 0)
		id, err := e.rt.Enqueue(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
		if err != nil {
			t.Fatal(err)
		}
		// erika leaves the group between enqueue and pickup.
		if _, err := db.Exec(ctx, "UPDATE be_users SET group_uids = '[]' WHERE uid = ?", erika); err != nil {
			t.Fatal(err)
		}
		if err := e.rt.RunQueued(ctx, id); err != nil {
			t.Fatal(err)
		}
		r, _ := e.runs.Get(ctx, id)
		if r.Status != run.StatusFailed || r.Reason != run.ReasonPolicyDenied || r.ErrorClass != "configuration_denied" {
			t.Fatalf("run = %s/%s/%s, want failed/policy_denied", r.Status, r.Reason, r.ErrorClass)
		}
		if n := len(e.srv.Requests()); n != 0 {
			t.Errorf("the model was called %d times", n)
		}
	})
}

func TestCorruptStoredRequestRefusesTheRun(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false)
		e.withQueue(t, 0)
		id, err := e.rt.Enqueue(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("hi")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, `UPDATE runs SET request = ? WHERE uuid = ?`, `{"v":1,"initiator":2,"request":{"configuration":1,"bogus":true}}`, id); err != nil {
			t.Fatal(err)
		}
		if err := e.rt.RunQueued(ctx, id); err != nil {
			t.Fatal(err)
		}
		r, _ := e.runs.Get(ctx, id)
		if r.Status != run.StatusFailed || r.Reason != run.ReasonPolicyDenied || r.ErrorClass != "process_invocation_refused" ||
			r.ErrorMessage != "request_unreadable" {
			t.Fatalf("run = %s/%s/%s/%s, want failed/policy_denied/process_invocation_refused/request_unreadable",
				r.Status, r.Reason, r.ErrorClass, r.ErrorMessage)
		}
	})
}

func TestRetryableProviderFailureRequeuesThenExhausts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		// The provider itself retries 3 times per call: each call fails after 4 answers of 503.
		var replies []llmtest.Reply
		for i := 0; i < 16; i++ {
			replies = append(replies, llmtest.Reply{Status: 503, ErrorMessage: "overloaded"})
		}
		e := setup(t, db, false, replies...)
		e.withQueue(t, 0)
		id, err := e.rt.Enqueue(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("hi")})
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 4; i++ {
			if err := e.rt.RunQueued(ctx, id); err != nil {
				t.Fatal(err)
			}
			r, _ := e.runs.Get(ctx, id)
			if i <= 3 && (r.Status != run.StatusQueued || r.RequeueCount != i) {
				t.Fatalf("after failure %d: %s requeues=%d", i, r.Status, r.RequeueCount)
			}
			if i == 4 && (r.Status != run.StatusFailed || r.Reason != run.ReasonRetriesExhausted) {
				t.Fatalf("after failure 4: %s/%s", r.Status, r.Reason)
			}
		}
	})
}

func TestGarbageFromTheProviderFailsTheRunWithoutRetry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, llmtest.Reply{Garbage: true})
		e.withQueue(t, 0)
		id, _ := e.rt.Enqueue(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("hi")})
		if err := e.rt.RunQueued(ctx, id); err != nil {
			t.Fatal(err)
		}
		r, _ := e.runs.Get(ctx, id)
		if r.Status != run.StatusFailed || r.Reason != run.ReasonNotRetryable || r.ErrorClass != "provider_bad_response" || r.LeaseOwner != "" {
			t.Fatalf("run = %s/%s/%s lease=%q", r.Status, r.Reason, r.ErrorClass, r.LeaseOwner)
		}
	})
}

func TestWorkerKilledMidRunIsRequeuedByTheReaper(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, cycleReplies()...)
		e.withQueue(t, 0)
		id, _ := e.rt.Enqueue(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
		// A worker claims the run and dies: nobody renews its lease.
		if won, err := e.runs.Claim(ctx, id, "worker:dead-host:1:x", agent.DefaultLease); !won || err != nil {
			t.Fatalf("claim = %v, %v", won, err)
		}
		if rep, _ := e.rt.Reap(ctx); rep != (agent.ReapReport{}) {
			t.Fatalf("reaped a live lease: %+v", rep)
		}
		e.clk.Advance(agent.DefaultLease + time.Second)
		rep, err := e.rt.Reap(ctx)
		if err != nil || rep.Requeued != 1 {
			t.Fatalf("Reap = %+v, %v", rep, err)
		}
		r, _ := e.runs.Get(ctx, id)
		if r.Status != run.StatusQueued || r.RequeueCount != 1 || r.LeaseOwner != "" {
			t.Fatalf("after reap: %s requeues=%d lease=%q", r.Status, r.RequeueCount, r.LeaseOwner)
		}
		if err := e.rt.RunQueued(ctx, id); err != nil {
			t.Fatal(err)
		}
		if r, _ := e.runs.Get(ctx, id); r.Status != run.StatusWaitingForApproval {
			t.Fatalf("requeued run = %s/%s", r.Status, r.Reason)
		}
	})
}

func TestWorkerKilledInsideANonIdempotentWriteIsDeadLettered(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, call("c1", "send_newsletter", `{}`), text("sent"))
		var sends atomic.Int32
		started, release := make(chan struct{}), make(chan struct{})
		send := tool.NewFuncTool(tool.Def{Name: "send_newsletter", Description: "send it", Schema: json.RawMessage(`{"type":"object"}`),
			Effect: tool.EffectNonIdempotentWrite, Group: "mail", DefaultEnabled: true},
			func(ctx context.Context, c tool.Call) (tool.Result, error) {
				sends.Add(1)
				close(started)
				<-release // the worker "dies" here: nothing renews its lease
				return tool.Result{Content: map[string]any{"sent": true}}, nil
			})
		if err := e.tools.Register(send); err != nil {
			t.Fatal(err)
		}
		e.withQueue(t, 0)
		id, _ := e.rt.Enqueue(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("send the newsletter")})
		if err := e.rt.RunQueued(ctx, id); err != nil {
			t.Fatal(err)
		}
		s := e.status(t, erika, id)
		done := make(chan error, 1)
		go func() {
			_, err := e.rt.Approve(ctx, erika, id, agent.Decision{Approve: true, TurnDigest: s.Pending.TurnDigest})
			done <- err
		}()
		<-started
		r, _ := e.runs.Get(ctx, id)
		if len(r.PendingEffect) == 0 {
			t.Fatal("no write fence while the write runs")
		}
		e.clk.Advance(agent.DefaultLease + time.Second)
		rep, err := e.rt.Reap(ctx)
		if err != nil || rep.DeadLettered != 1 || rep.Requeued != 0 {
			t.Fatalf("Reap = %+v, %v; want one dead letter", rep, err)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatalf("Approve after losing the run = %v", err)
		}
		r, _ = e.runs.Get(ctx, id)
		if r.Status != run.StatusFailed || r.ErrorClass != "dead_letter_fenced_write" {
			t.Fatalf("run = %s/%s/%s", r.Status, r.Reason, r.ErrorClass)
		}
		if rep, _ := e.rt.Reap(ctx); rep != (agent.ReapReport{}) {
			t.Errorf("second reap acted: %+v", rep)
		}
		if n := sends.Load(); n != 1 {
			t.Errorf("newsletter sent %d times, want exactly once", n)
		}
		if k := e.kinds(t, id); k[run.EventTool] != 1 {
			t.Errorf("the tool that ran lost its audit record: %v", k)
		}
		if n := len(e.srv.Requests()); n != 1 {
			t.Errorf("the lost segment called the model again: %d requests", n)
		}
	})
}

func TestContextWindowTooSmallEndsBeforeAnyProviderCall(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, text("never"))
		if _, err := db.Exec(ctx, "UPDATE configurations SET context_window = 1100 WHERE uid = ?", cfgPlain); err != nil {
			t.Fatal(err)
		}
		long := make([]byte, 2000)
		for i := range long {
			long[i] = 'a' + byte(i%26)
		}
		res, err := e.rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: []llm.Message{{Role: llm.RoleUser, Content: string(long)}}})
		if err != nil {
			t.Fatal(err)
		}
		if s := e.status(t, erika, res.UUID); s.Status != run.StatusFailed || s.TerminationReason != run.ReasonContextTruncated {
			t.Fatalf("status = %s/%s", s.Status, s.TerminationReason)
		}
		if n := len(e.srv.Requests()); n != 0 {
			t.Errorf("provider called %d times", n)
		}
	})
}

func TestQueuedRunWhoseJobWasDiscardedIsRestartedByTheReaper(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, cycleReplies()...)
		e.withQueue(t, 0)
		id, err := e.rt.Enqueue(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, "DELETE FROM river_job"); err != nil {
			t.Fatal(err)
		}
		if rep, _ := e.rt.Reap(ctx); rep.Restarted != 0 {
			t.Fatalf("a fresh queued run was restarted: %+v", rep)
		}
		e.clk.Advance(6 * time.Minute)
		rep, err := e.rt.Reap(ctx)
		if err != nil || rep.Restarted != 1 {
			t.Fatalf("Reap = %+v, %v; want one restarted run", rep, err)
		}
		var live int
		_ = db.QueryRow(ctx, "SELECT COUNT(*) FROM river_job WHERE state = 'available'").Scan(&live)
		if live != 1 {
			t.Fatalf("%d live jobs, want 1", live)
		}
		if rep, _ := e.rt.Reap(ctx); rep.Restarted != 0 {
			t.Errorf("a run with a live job was restarted again: %+v", rep)
		}
		if err := e.rt.RunQueued(ctx, id); err != nil {
			t.Fatal(err)
		}
		if r, _ := e.runs.Get(ctx, id); r.Status != run.StatusWaitingForApproval {
			t.Fatalf("the restarted run = %s", r.Status)
		}
	})
}
