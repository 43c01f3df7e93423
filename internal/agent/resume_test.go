package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"waymark/internal/agent"
	"waymark/internal/queue"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// noChat is the chat handler a queue with chat workers needs; these tests
// insert no chat job.
type noChat struct{}

func (noChat) Work(context.Context, json.RawMessage) error { return nil }

// withResumeQueue wires a River queue into the runtime whose chat workers
// (chats of them; 0: none) carry out resume jobs.
func (e *env) withResumeQueue(t *testing.T, chats int) {
	t.Helper()
	e.withQueueOf(t, queue.Config{ChatWorkers: chats}, func(rt *agent.Runtime) queue.Handlers {
		return queue.Handlers{Chat: noChat{}, Resume: rt}
	})
}

func (e *env) resumeJobs(t *testing.T) int {
	t.Helper()
	var n int
	if err := e.db.QueryRow(context.Background(), "SELECT COUNT(*) FROM river_job WHERE kind = ?", queue.ResumeArgs{}.Kind()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (e *env) writes(t *testing.T) int {
	t.Helper()
	var n int
	if err := e.db.QueryRow(context.Background(), "SELECT COUNT(*) FROM record_history").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// An approval through ApproveOnWorker is carried out by
// the queue's worker and answers as Approve does — the answer included when
// the worker is of this process; a refusal the request can tell from the
// stored run answers at once and inserts no job.
func TestApproveOnWorkerIsCarriedOutByAResumeJob(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, cycleReplies()...)
		e.withResumeQueue(t, 1)
		res, err := e.rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
		if err != nil {
			t.Fatal(err)
		}
		st := e.status(t, erika, res.UUID)
		if st.Status != run.StatusWaitingForApproval {
			t.Fatalf("Run = %s, want waiting for approval", st.Status)
		}
		digest := st.Pending.TurnDigest
		if _, err := e.rt.ApproveOnWorker(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: "stale"}); !errors.Is(err, agent.ErrStaleTurn) {
			t.Fatalf("stale approval = %v, want ErrStaleTurn", err)
		}
		if n := e.resumeJobs(t); n != 0 {
			t.Fatalf("a refused approval inserted %d resume jobs", n)
		}
		done, err := e.rt.ApproveOnWorker(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: digest})
		if err != nil {
			t.Fatal(err)
		}
		if done.Status == nil || done.Status.Status != run.StatusCompleted || done.Status.Answer != "Done: the description is set." {
			t.Fatalf("after the approval: %+v", done.Status)
		}
		if n := e.resumeJobs(t); n != 1 {
			t.Errorf("%d resume jobs, want 1", n)
		}
		if n := e.writes(t); n != 1 {
			t.Errorf("%d writes, want 1", n)
		}
	})
}

// A resume job whose run is gone or no longer waiting
// changes nothing and records the refusal the request answers; an
// unreadable one records an internal failure instead of being retried.
func TestResumeJobOfAGoneOrDecidedRunRecordsTheRefusal(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, cycleReplies()...)
		res, err := e.rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
		if err != nil {
			t.Fatal(err)
		}
		digest := e.status(t, erika, res.UUID).Pending.TurnDigest
		if _, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: digest}); err != nil {
			t.Fatal(err)
		}
		cases := []struct{ name, payload, want string }{
			{"gone", `{"ticket": "t1", "run": "no-such-run", "actor": 2, "decision": {"approve": true, "turnDigest": "x"}}`, "not_found"},
			{"decided", fmt.Sprintf(`{"ticket": "t2", "run": %q, "actor": 2, "decision": {"approve": true, "turnDigest": %q}}`, res.UUID, digest), "not_waiting"},
			{"answered", fmt.Sprintf(`{"ticket": "t3", "run": %q, "actor": 2, "input": {"turnDigest": %q, "values": {}}}`, res.UUID, digest), "not_waiting"},
			{"unreadable", `{"run": 7}`, "internal"},
		}
		for _, c := range cases {
			out, err := e.rt.WorkResume(ctx, json.RawMessage(c.payload))
			if err != nil {
				t.Errorf("%s: WorkResume = %v, want a recorded refusal", c.name, err)
				continue
			}
			raw, _ := json.Marshal(out)
			var o struct{ Code string }
			if err := json.Unmarshal(raw, &o); err != nil || o.Code != c.want {
				t.Errorf("%s: outcome %s, want code %s", c.name, raw, c.want)
			}
		}
		if n := e.writes(t); n != 1 {
			t.Errorf("%d writes, want the approved one only", n)
		}
		if r, _ := e.runs.Get(ctx, res.UUID); r.Status != run.StatusCompleted {
			t.Errorf("run = %s, want completed as the approval left it", r.Status)
		}
	})
}

// Without a queue that resumes, ApproveOnWorker decides
// in the call, as Approve.
func TestApproveOnWorkerWithoutAQueueDecidesInTheCall(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, cycleReplies()...)
		res, err := e.rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
		if err != nil {
			t.Fatal(err)
		}
		digest := e.status(t, erika, res.UUID).Pending.TurnDigest
		done, err := e.rt.ApproveOnWorker(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: digest})
		if err != nil || done.Status == nil || done.Status.Status != run.StatusCompleted {
			t.Fatalf("ApproveOnWorker = %+v, %v; want completed", done.Status, err)
		}
	})
}
