package scale_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// With the API started as `serve --workers 0` and a
// separate worker application on the same database, an approval and an
// answer to a question taken through the runs API resume the run on the
// worker: the API process calls no model, the worker makes the resumed
// turn's call, and the request still answers the run as it is after the
// decision. (Before, the resumed turn ran in the API's request.) On
// PostgreSQL the worker is woken by the insert: it polls once an hour here.
func TestRunsAPIApprovalIsWorkedByAWorkerProcess(t *testing.T) {
	cases := []struct {
		name     string
		proposal llmtest.Reply
		path     string
		body     func(digest string) map[string]any
	}{
		{"approval", write("c1", `{"description": "Neu"}`), "/approval", func(d string) map[string]any {
			return map[string]any{"approve": true, "turnDigest": d}
		}},
		{"input", llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "choose", Arguments: `{"question": "Which tone?", "options": ["formal", "casual"]}`}}},
			"/input", func(d string) map[string]any {
				return map[string]any{"turnDigest": d, "values": map[string]any{"choice": "formal"}}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
				api := wt.New(t, db, wt.Site, &wt.Options{APIOnly: true})
				opts := &wt.Options{Workers: 1, ChatWorkers: 1}
				if db.Dialect() == store.Postgres {
					opts.PollInterval = time.Hour
				}
				worker := wt.New(t, another(), "", opts)
				api.LLM.Add(c.proposal, answer("Fertig."))
				erika := api.As(wt.Erika)
				id := wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs", runRequest(true), http.StatusCreated)).UUID
				st := runUntil(t, erika, id, func(s string) bool { return strings.HasPrefix(s, "waiting_for_") })
				done := wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs/"+id+c.path, c.body(digestOf(t, st)), http.StatusOK))
				if done.Status != "completed" || done.TerminationReason != "completed" || done.UUID != id {
					t.Fatalf("after the %s: %+v", c.name, done)
				}
				if c.name == "approval" && !strings.Contains(page1(t, db), "Neu") {
					t.Error("the approved write did not happen")
				}
				if n := modelCalls(t, api); n != 0 {
					t.Errorf("the API process made %d model calls, want 0", n)
				}
				if n := modelCalls(t, worker); n != 2 {
					t.Errorf("the worker process made %d model calls, want 2 (the run's start and its resumed turn)", n)
				}
			})
		})
	}
}

// Two decisions on one waiting run that both passed the
// request's checks are decided by the worker's claim, in either order:
// the first job worked carries out its decision, the second finds the run
// no longer waiting, changes nothing and its request answers 409
// not_waiting — one write for an approval that won, none for a denial.
func TestRacingDecisionsOnTheRunsAPIAreDecidedByTheWorkersClaim(t *testing.T) {
	for _, approveFirst := range []bool{true, false} {
		name := "deny first"
		if approveFirst {
			name = "approve first"
		}
		t.Run(name, func(t *testing.T) {
			storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
				api := wt.New(t, db, wt.Site, &wt.Options{APIOnly: true})
				api.LLM.Add(write("c1", `{"description": "Neu"}`), answer("Fertig."))
				erika := api.As(wt.Erika)
				st := wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs", runRequest(false), http.StatusCreated))
				id, digest := st.UUID, digestOf(t, st)
				decisions := []map[string]any{{"approve": true, "turnDigest": digest}, {"approve": false, "turnDigest": digest}}
				if !approveFirst {
					decisions[0], decisions[1] = decisions[1], decisions[0]
				}
				answers := make([]wt.Response, 2)
				var wg sync.WaitGroup
				for i, d := range decisions {
					wg.Go(func() { answers[i] = erika.Do("POST", "/api/runs/"+id+"/approval", d) })
					// Each request passed its checks and inserted its job
					// before the next is sent and before any worker runs.
					untilResumeJobs(t, db, i+1)
				}
				wt.New(t, another(), "", &wt.Options{ChatWorkers: 1})
				wg.Wait()
				if answers[0].Status != http.StatusOK || answers[1].Status != http.StatusConflict || answers[1].ErrorCode() != "not_waiting" {
					t.Fatalf("the decisions answered %d %s and %d %s, want 200 and 409 not_waiting",
						answers[0].Status, answers[0].Body, answers[1].Status, answers[1].Body)
				}
				if got := wt.Decode[wt.RunStatus](t, answers[0]).Status; got != "completed" {
					t.Errorf("the winner's run status = %v, want completed", got)
				}
				var writes int
				if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM record_history").Scan(&writes); err != nil {
					t.Fatal(err)
				}
				if want := map[bool]int{true: 1, false: 0}[approveFirst]; writes != want {
					t.Errorf("%d writes, want %d", writes, want)
				}
			})
		})
	}
}

// A decision that no worker carries out within the wait
// (here: none runs) answers the run as it is then — still waiting — and is
// carried out all the same once a worker comes.
func TestADecisionPastTheWaitAnswersTheRunAsItIsAndIsCarriedOutLater(t *testing.T) {
	storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
		erika, id := approvedWithoutAWorker(t, db, 0)
		wt.New(t, another(), "", &wt.Options{ChatWorkers: 1})
		runUntil(t, erika, id, func(s string) bool { return s == "completed" })
		if !strings.Contains(page1(t, db), "Neu") {
			t.Error("the approved write did not happen")
		}
	})
}

// A decision whose resume job a worker took and then died
// before it claimed the run (the job reads as running in River, which would
// rescue it only after a day) is handed to the workers again by the reaper
// once a lease has passed, and carried out once; before a lease the reaper
// leaves it alone (its worker may be alive). (A job whose run is being worked
// is never handed back: TestRescueStuckResumesHandsBackOnlyAJobLeftByItsWorker
// in internal/queue.)
func TestADecisionWhoseWorkerDiedBeforeItsClaimIsCarriedOutAfterALease(t *testing.T) {
	storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
		const lease = 2 * time.Second
		erika, id := approvedWithoutAWorker(t, db, lease)
		// A worker took the job and died before it claimed the run.
		taken := time.Now().UTC()
		if _, err := db.Exec(context.Background(), "UPDATE river_job SET state = 'running', attempt = 1, attempted_at = ? WHERE kind = 'waymark_resume'", taken); err != nil {
			t.Fatal(err)
		}
		worker := wt.New(t, another(), "", &wt.Options{ChatWorkers: 1, Lease: lease})
		if rep, err := worker.App.Runtime.Reap(t.Context()); err != nil || rep.ResumesRescued != 0 {
			t.Fatalf("a reap within the lease = %+v, %v; want the job left to its worker", rep, err)
		}
		if got := erika.MustRun(id); got.Status != "waiting_for_approval" {
			t.Fatalf("within the lease the run is %s, want still waiting", got.Status)
		}
		for time.Since(taken) <= lease {
			time.Sleep(50 * time.Millisecond) // the lease is real time: River's attempted_at
		}
		// After the lease a reap rescues it — this one, or the worker's own
		// reaper (every quarter of a lease) when it comes first: then the
		// run has left waiting already.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			rep, err := worker.App.Runtime.Reap(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if rep.ResumesRescued == 1 || erika.MustRun(id).Status != "waiting_for_approval" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("10 s after the lease the job is not rescued: last reap %+v", rep)
			}
		}
		runUntil(t, erika, id, func(s string) bool { return s == "completed" })
		if !strings.Contains(page1(t, db), "Neu") {
			t.Error("the approved write did not happen")
		}
		var writes, approvals int
		if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM record_history").Scan(&writes); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM run_events WHERE run_uuid = ? AND kind = 'approval' AND payload LIKE '%\"approved\"%'", id).Scan(&approvals); err != nil {
			t.Fatal(err)
		}
		if writes != 1 || approvals != 1 {
			t.Errorf("%d writes and %d decisions recorded, want one each", writes, approvals)
		}
		if rep, err := worker.App.Runtime.Reap(t.Context()); err != nil || rep.ResumesRescued != 0 {
			t.Errorf("a reap after the job finished = %+v, %v; want nothing rescued", rep, err)
		}
	})
}

// approvedWithoutAWorker starts a run of page 1 through an API process without
// workers (lease: its runtime's, 0 the default) and approves its card as
// erika; with no worker to carry the decision out, the request answers past
// its wait with the run still waiting. It returns erika and the run.
func approvedWithoutAWorker(t *testing.T, db *store.DB, lease time.Duration) (*wt.Client, string) {
	t.Helper()
	api := wt.New(t, db, wt.Site, &wt.Options{APIOnly: true, ResumeWait: 50 * time.Millisecond, Lease: lease})
	api.LLM.Add(write("c1", `{"description": "Neu"}`), answer("Fertig."))
	erika := api.As(wt.Erika)
	st := wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs", runRequest(false), http.StatusCreated))
	got := wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs/"+st.UUID+"/approval", wt.Approve{Approve: true, TurnDigest: digestOf(t, st)}, http.StatusOK))
	if got.Status != "waiting_for_approval" {
		t.Fatalf("past the wait without a worker: %+v", got)
	}
	return erika, st.UUID
}

// runRequest is a run of configuration 1 about page 1.
func runRequest(queued bool) map[string]any {
	return map[string]any{"configuration": 1, "queued": queued,
		"messages": []map[string]string{{"role": "user", "content": "Improve the description of page 1"}}}
}

func digestOf(t *testing.T, st wt.RunStatus) string {
	t.Helper()
	if st.Pending == nil {
		t.Fatalf("no pending decision: %+v", st)
	}
	return st.Pending.TurnDigest
}

// runUntil reads run id until its status satisfies ok (at most 20 s) and returns it.
func runUntil(t *testing.T, c *wt.Client, id string, ok func(status string) bool) wt.RunStatus {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := c.MustRun(id)
		if ok(st.Status) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s after 20s: %+v", id, st)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not a synchronisation
	}
}

// untilResumeJobs waits (at most 20 s) until db holds n resume jobs.
func untilResumeJobs(t *testing.T, db *store.DB, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got int
		if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM river_job WHERE kind = 'waymark_resume'").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d resume jobs after 20s, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, not a synchronisation
	}
}

func page1(t *testing.T, db *store.DB) string {
	t.Helper()
	var fields string
	if err := db.QueryRow(context.Background(), "SELECT fields FROM records WHERE tbl = 'pages' AND uid = 1").Scan(&fields); err != nil {
		t.Fatal(err)
	}
	return fields
}
