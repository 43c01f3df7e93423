package adr022_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// Hand-back (item 6): a card released elsewhere (the runs API, as the inbox
// does) goes idle on the next read, shows what was written (record
// identities only) and records the run as the next turn's predecessor.
func TestHandBackOfACardReleasedElsewhere(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "released elsewhere"}`), answer("done"))
		erika := e.As(wt.Erika)
		conv := send(t, e, erika, start(t, erika, seo)["id"].(float64), "Los")
		card := conv["card"].(map[string]any)
		run := conv["lastRunUuid"].(string)
		if run != "" {
			t.Fatalf("a waiting conversation names a last run: %v", run)
		}
		var pending string
		_ = db.QueryRow(context.Background(), "SELECT pending_run_uuid FROM conversations").Scan(&pending)
		erika.Must("POST", "/api/runs/"+pending+"/approval", map[string]any{"approve": true, "turnDigest": card["turnDigest"]}, 200)
		got := settled(t, e, erika, conv["id"].(float64))
		if got["status"] != "idle" || got["lastRunUuid"] != pending || got["card"] != nil {
			t.Fatalf("after hand-back: %v", got)
		}
		msgs := got["messages"].([]any)
		notice := msgs[len(msgs)-1].(map[string]any)["notice"].(string)
		if !strings.Contains(notice, "pages:1 (description)") || strings.Contains(notice, "released elsewhere") {
			t.Errorf("hand-back notice = %q", notice)
		}
		if n := countPoints(t, db); n != 0 {
			t.Errorf("%d open points", n)
		}
	})
}

// P.R4 (cancelled run): a run cancelled elsewhere records no open point and
// the conversation goes on.
func TestPR4_CancelledRunRecordsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "x"}`), answer("weiter"))
		erika := e.As(wt.Erika)
		conv := send(t, e, erika, start(t, erika, seo)["id"].(float64), "Los")
		var pending string
		_ = db.QueryRow(context.Background(), "SELECT pending_run_uuid FROM conversations").Scan(&pending)
		erika.Must("POST", "/api/runs/"+pending+"/cancel", nil, 200)
		if got := settled(t, e, erika, conv["id"].(float64)); got["status"] != "idle" {
			t.Fatalf("after the cancel: %v", got)
		}
		if n := countPoints(t, db); n != 0 {
			t.Errorf("%d open points", n)
		}
		if got := send(t, e, erika, conv["id"].(float64), "Weiter"); got["status"] != "idle" {
			t.Errorf("the next turn: %v", got)
		}
	})
}

// P.R4 (refused decision): a decision the runtime refuses (here: the
// process approval was revoked meanwhile) records nothing.
func TestPR4_RefusedDecisionRecordsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"seoTitle": "a"}`))
		erika := e.As(wt.Erika)
		conv := send(t, e, erika, start(t, erika, seo)["id"].(float64), "Los")
		k, err := e.App.Skills.Get(ctx, seo)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.App.Skills.Revoke(ctx, 1, seo, k.Digest()); err != nil {
			t.Fatal(err)
		}
		after := decide(t, e, erika, conv, "skip")
		if after["status"] != "failed" {
			t.Fatalf("after the refused decision: %v", after)
		}
		if n := countPoints(t, db); n != 0 {
			t.Fatalf("a refused skip recorded %d open points", n)
		}
	})
}

// P.C2 (failed call): an approved call that fails (the write is refused)
// closes nothing and is not applied.
func TestPC2_FailedCallClosesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "a"}`), answer("ok"), write("c2", `{"description": "b"}`), answer("ok"))
		erika := e.As(wt.Erika)
		decide(t, e, erika, send(t, e, erika, start(t, erika, seo)["id"].(float64), "Los"), "skip")
		conv := send(t, e, erika, start(t, erika, seo)["id"].(float64), "Nochmal")
		// The editor loses the grant for the description: the approved write fails.
		if _, err := db.Exec(ctx, `UPDATE be_groups SET non_exclude_fields = '["pages:seoTitle"]' WHERE uid = 1`); err != nil {
			t.Fatal(err)
		}
		after := decide(t, e, erika, conv, "apply")
		if n := countPoints(t, db); n != 1 {
			t.Fatalf("a failed write changed the open points: %d left", n)
		}
		out := after["outcomes"].([]any)
		if last := out[len(out)-1].(map[string]any); last["outcome"] != "not_applied" {
			t.Errorf("outcome of the failed write = %v", last)
		}
	})
}

// Summary: once the process reports completion, the outcomes are grouped.
func TestSummaryAfterTheProcessReportsCompletion(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "a"}`),
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "p", Name: "set_progress", Arguments: `{"current": 1, "total": 1, "completed": true}`}}},
			answer("Fertig."))
		erika := e.As(wt.Erika)
		conv := decide(t, e, erika, send(t, e, erika, start(t, erika, seo)["id"].(float64), "Los"), "apply")
		sum, ok := conv["summary"].(map[string]any)
		if !ok || sum["applied"] != 1.0 || sum["skipped"] != 0.0 {
			t.Fatalf("summary = %v (progress %v)", conv["summary"], conv["progress"])
		}
	})
}

// P.R4 (failed continuation): a skip whose continuation fails records nothing.
func TestPR4_FailedContinuationRecordsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "x"}`), llmtest.Reply{Status: 400, ErrorMessage: "model gone"})
		erika := e.As(wt.Erika)
		conv := decide(t, e, erika, send(t, e, erika, start(t, erika, seo)["id"].(float64), "Los"), "skip")
		if conv["status"] != "failed" {
			t.Fatalf("after the failed continuation: %v", conv)
		}
		if n := countPoints(t, db); n != 0 {
			t.Fatalf("%d open points recorded", n)
		}
	})
}

// A turn interrupted by a stopped process (the conversation stayed
// processing) is settled on a later read from what its run shows.
func TestInterruptedTurnIsRecoveredOnRead(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		e.LLM.Add(answer("first"))
		erika := e.As(wt.Erika)
		conv := send(t, e, erika, start(t, erika, tone)["id"].(float64), "Hallo")
		run := conv["lastRunUuid"].(string)
		if _, err := db.Exec(ctx, `UPDATE conversations SET status = 'processing', pending_run_uuid = ?, updated_at = 1`, run); err != nil {
			t.Fatal(err)
		}
		if got := settled(t, e, erika, conv["id"].(float64)); got["status"] != "idle" {
			t.Fatalf("recovered conversation = %v", got)
		}
		if _, err := db.Exec(ctx, `UPDATE conversations SET status = 'processing', pending_run_uuid = '', updated_at = 1`); err != nil {
			t.Fatal(err)
		}
		if got := settled(t, e, erika, conv["id"].(float64)); got["status"] != "failed" || got["error"] != "failed" {
			t.Fatalf("a turn without a run = %v", got)
		}
	})
}

// pendingRun is the uuid of the one run of c that waits for a decision, as the inbox lists it.
func pendingRun(t *testing.T, c *wt.Client) string {
	t.Helper()
	runs := c.Must("GET", "/api/inbox", nil, 200).Map(t)["runs"].([]any)
	if len(runs) != 1 {
		t.Fatalf("inbox = %v, want one waiting run", runs)
	}
	return runs[0].(map[string]any)["uuid"].(string)
}

// lastNotice is the notice of the conversation's last message that has one.
func lastNotice(conv map[string]any) string {
	msgs := conv["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		if n, _ := msgs[i].(map[string]any)["notice"].(string); n != "" {
			return n
		}
	}
	return ""
}

// waitForModelRequests waits until the scripted model got n requests.
func waitForModelRequests(t *testing.T, e *wt.Env, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(e.LLM.Requests()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the model got %d requests, want %d", len(e.LLM.Requests()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Issue 11 item 3: a card approved elsewhere is handed back at once, not
// only after its run finished: while the approved turn still runs, a read
// shows the conversation processing, without the card, with the notice
// approved_elsewhere; once the run ended it goes idle and the next turn
// continues the process from it.
func TestCardApprovedElsewhereIsHandedBackAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		slow := answer("done")
		slow.Delay = 500 * time.Millisecond
		e.LLM.Add(write("c1", `{"description": "released elsewhere"}`), slow, answer("weiter"))
		erika := e.As(wt.Erika)
		conv := send(t, e, erika, start(t, erika, seo)["id"].(float64), "Los")
		id, digest := conv["id"].(float64), conv["card"].(map[string]any)["turnDigest"]
		pending := pendingRun(t, erika)
		approved := make(chan int, 1)
		go func() {
			approved <- erika.Do("POST", "/api/runs/"+pending+"/approval", map[string]any{"approve": true, "turnDigest": digest}).Status
		}()
		waitForModelRequests(t, e, 2)
		during := erika.Must("GET", "/api/conversations/"+itoa(id), nil, 200).Map(t)
		if during["status"] != "processing" || during["card"] != nil || !strings.HasPrefix(lastNotice(during), "approved_elsewhere") {
			t.Errorf("while the approved turn runs: status %v, card %v, notice %q", during["status"], during["card"], lastNotice(during))
		}
		if r := erika.Do("POST", "/api/conversations/"+itoa(id)+"/messages", map[string]any{"content": "und?"}); r.Status != 409 || r.ErrorCode() != "busy" {
			t.Errorf("a message while the approved turn runs = %d %s", r.Status, r.Body)
		}
		if status := <-approved; status != 200 {
			t.Fatalf("the approval elsewhere = %d", status)
		}
		after := settled(t, e, erika, id)
		if after["status"] != "idle" || after["lastRunUuid"] != pending || after["card"] != nil {
			t.Fatalf("after the approved turn: status %v, lastRun %v, card %v", after["status"], after["lastRunUuid"], after["card"])
		}
		msgs := after["messages"].([]any)
		if last := msgs[len(msgs)-1].(map[string]any); last["notice"] != "approved_elsewhere: pages:1 (description)" {
			t.Errorf("last message = %v, want the notice approved_elsewhere with the record written", last)
		}
		next := send(t, e, erika, id, "Weiter")
		if st := erika.Must("GET", "/api/runs/"+next["lastRunUuid"].(string), nil, 200).Map(t); st["holdsProcess"] != true || st["predecessorRunUuid"] != pending {
			t.Errorf("the next turn = holdsProcess %v, predecessor %v", st["holdsProcess"], st["predecessorRunUuid"])
		}
	})
}

// Issue 11 item 3: a card denied, cancelled or whose process was ended
// elsewhere is handed back with a notice saying which.
func TestCardDecidedElsewhereSaysWhatHappened(t *testing.T) {
	cases := []struct {
		name, notice string
		release      func(t *testing.T, c *wt.Client, run string, digest any)
	}{
		{"denied", "denied_elsewhere", func(t *testing.T, c *wt.Client, run string, digest any) {
			c.Must("POST", "/api/runs/"+run+"/approval", map[string]any{"approve": false, "turnDigest": digest}, 200)
		}},
		{"cancelled", "cancelled_elsewhere", func(t *testing.T, c *wt.Client, run string, _ any) {
			c.Must("POST", "/api/runs/"+run+"/cancel", nil, 200)
		}},
		{"process ended", "process_ended", func(t *testing.T, c *wt.Client, run string, _ any) {
			c.Must("POST", "/api/runs/"+run+"/end-process", nil, 200)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db)
				e.LLM.Add(write("c1", `{"description": "x"}`), answer("ok"))
				erika := e.As(wt.Erika)
				conv := send(t, e, erika, start(t, erika, seo)["id"].(float64), "Los")
				tc.release(t, erika, pendingRun(t, erika), conv["card"].(map[string]any)["turnDigest"])
				got := settled(t, e, erika, conv["id"].(float64))
				if got["status"] != "idle" || got["card"] != nil || lastNotice(got) != tc.notice {
					t.Errorf("after %s elsewhere: status %v, card %v, notice %q", tc.name, got["status"], got["card"], lastNotice(got))
				}
			})
		})
	}
}
