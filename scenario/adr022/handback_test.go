package adr022_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"waymark/internal/chat"
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
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
		card := conv.Card
		if card == nil {
			t.Fatalf("no card: %+v", conv)
		}
		run := conv.LastRunUUID
		if run != "" {
			t.Fatalf("a waiting conversation names a last run: %v", run)
		}
		var pending string
		_ = db.QueryRow(context.Background(), "SELECT pending_run_uuid FROM conversations").Scan(&pending)
		erika.Must("POST", "/api/runs/"+pending+"/approval", wt.Approve{Approve: true, TurnDigest: card.TurnDigest}, 200)
		got := current(t, e, erika, conv.ID)
		if got.Status != "idle" || got.LastRunUUID != pending || got.Card != nil {
			t.Fatalf("after hand-back: %+v", got)
		}
		msgs := got.Messages
		notice := msgs[len(msgs)-1].Notice
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
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
		var pending string
		_ = db.QueryRow(context.Background(), "SELECT pending_run_uuid FROM conversations").Scan(&pending)
		erika.Must("POST", "/api/runs/"+pending+"/cancel", nil, 200)
		if got := current(t, e, erika, conv.ID); got.Status != "idle" {
			t.Fatalf("after the cancel: %+v", got)
		}
		if n := countPoints(t, db); n != 0 {
			t.Errorf("%d open points", n)
		}
		if got := said(t, e, erika, conv.ID, "Weiter"); got.Status != "idle" {
			t.Errorf("the next turn: %+v", got)
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
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
		k, err := e.App.Skills.Get(ctx, seo)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.App.Skills.Revoke(ctx, 1, seo, k.Digest()); err != nil {
			t.Fatal(err)
		}
		after := decided(t, e, erika, conv, "skip")
		if after.Status != "failed" {
			t.Fatalf("after the refused decision: %+v", after)
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
		decided(t, e, erika, said(t, e, erika, opened(t, erika, seo).ID, "Los"), "skip")
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Nochmal")
		// The editor loses the grant for the description: the approved write fails.
		if _, err := db.Exec(ctx, `UPDATE be_groups SET non_exclude_fields = '["pages:seoTitle"]' WHERE uid = 1`); err != nil {
			t.Fatal(err)
		}
		after := decided(t, e, erika, conv, "apply")
		if n := countPoints(t, db); n != 1 {
			t.Fatalf("a failed write changed the open points: %d left", n)
		}
		out := after.Outcomes
		if last := out[len(out)-1]; last.Outcome != "not_applied" {
			t.Errorf("outcome of the failed write = %+v", last)
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
		conv := decided(t, e, erika, said(t, e, erika, opened(t, erika, seo).ID, "Los"), "apply")
		if sum := conv.Summary; sum == nil || sum.Applied != 1 || sum.Skipped != 0 {
			t.Fatalf("summary = %+v (progress %s)", conv.Summary, conv.Progress)
		}
	})
}

// P.R4 (failed continuation): a skip whose continuation fails records nothing.
func TestPR4_FailedContinuationRecordsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "x"}`), llmtest.Reply{Status: 400, ErrorMessage: "model gone"})
		erika := e.As(wt.Erika)
		conv := decided(t, e, erika, said(t, e, erika, opened(t, erika, seo).ID, "Los"), "skip")
		if conv.Status != "failed" {
			t.Fatalf("after the failed continuation: %+v", conv)
		}
		if n := countPoints(t, db); n != 0 {
			t.Fatalf("%d open points recorded", n)
		}
	})
}

// A turn interrupted by a stopped process (the conversation stayed
// processing) is settled on a later read from what its run shows; one lost
// before its run began is started again once (the
// editor's message gets its answer), and fails when it is lost again.
func TestInterruptedTurnIsRecoveredOnRead(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		e.LLM.Add(answer("first"))
		erika := e.As(wt.Erika)
		conv := said(t, e, erika, opened(t, erika, tone).ID, "Hallo")
		run := conv.LastRunUUID
		if _, err := db.Exec(ctx, `UPDATE conversations SET status = 'processing', pending_run_uuid = ?, updated_at = 1`, run); err != nil {
			t.Fatal(err)
		}
		if got := current(t, e, erika, conv.ID); got.Status != "idle" {
			t.Fatalf("recovered conversation = %+v", got)
		}
		// The editor's next message, whose turn's worker died before its run began.
		e.LLM.Add(answer("second"))
		if _, err := db.Exec(ctx, `INSERT INTO conversation_messages (conversation_id, role, content, notice, created_at) VALUES (?, 'user', 'Noch etwas', '', 1)`, conv.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, `UPDATE conversations SET status = 'processing', pending_run_uuid = '', updated_at = 1`); err != nil {
			t.Fatal(err)
		}
		// The read restarts the turn; the restarted turn may even have
		// answered before the read's view was taken (the queue takes a job
		// at once): processing with the notice last, or idle with the
		// notice followed by the answer.
		if got := current(t, e, erika, conv.ID); !(got.Status == "processing" && lastNotice(got) == chat.NoticeTurnRestarted) && !restartedAndAnswered(got, "second") {
			t.Fatalf("a turn lost before its run began = %+v, want processing again with the notice %s", got, chat.NoticeTurnRestarted)
		}
		e.App.Chat.Wait()
		got := current(t, e, erika, conv.ID)
		if got.Status != "idle" || len(got.Messages) == 0 || got.Messages[len(got.Messages)-1].Content != "second" {
			t.Fatalf("the restarted turn = %+v, want idle with its answer", got)
		}
		// Lost again before its run began, right after it was restarted: it fails.
		if _, err := db.Exec(ctx, `INSERT INTO conversation_messages (conversation_id, role, content, notice, created_at) VALUES (?, 'assistant', '', ?, 1)`,
			conv.ID, chat.NoticeTurnRestarted); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, `UPDATE conversations SET status = 'processing', pending_run_uuid = '', updated_at = 1`); err != nil {
			t.Fatal(err)
		}
		if got := current(t, e, erika, conv.ID); got.Status != "failed" || got.Error != "failed" {
			t.Fatalf("a turn lost again after its restart = %+v, want failed", got)
		}
	})
}

// pendingRun is the uuid of the one run of c that waits for a decision, as the inbox lists it.
func pendingRun(t *testing.T, c *wt.Client) string {
	t.Helper()
	runs := wt.Decode[wt.Inbox](t, c.Must("GET", "/api/inbox", nil, 200)).Runs
	if len(runs) != 1 {
		t.Fatalf("inbox = %+v, want one waiting run", runs)
	}
	return runs[0].UUID
}

// lastNotice is the notice of the conversation's last message that has one.
func lastNotice(conv wt.Conversation) string {
	msgs := conv.Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if n := msgs[i].Notice; n != "" {
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

// A card approved elsewhere is handed back at once, not
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
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
		if conv.Card == nil {
			t.Fatalf("no card: %+v", conv)
		}
		id, digest := conv.ID, conv.Card.TurnDigest
		pending := pendingRun(t, erika)
		approved := make(chan int, 1)
		go func() {
			approved <- erika.Do("POST", "/api/runs/"+pending+"/approval", wt.Approve{Approve: true, TurnDigest: digest}).Status
		}()
		waitForModelRequests(t, e, 2)
		during := wt.Decode[wt.Conversation](t, erika.Must("GET", "/api/conversations/"+itoa(float64(id)), nil, 200))
		if during.Status != "processing" || during.Card != nil || !strings.HasPrefix(lastNotice(during), "approved_elsewhere") {
			t.Errorf("while the approved turn runs: status %v, card %v, notice %q", during.Status, during.Card, lastNotice(during))
		}
		if r := erika.Do("POST", "/api/conversations/"+itoa(float64(id))+"/messages", map[string]any{"content": "und?"}); r.Status != 409 || r.ErrorCode() != "busy" {
			t.Errorf("a message while the approved turn runs = %d %s", r.Status, r.Body)
		}
		if status := <-approved; status != 200 {
			t.Fatalf("the approval elsewhere = %d", status)
		}
		after := current(t, e, erika, id)
		if after.Status != "idle" || after.LastRunUUID != pending || after.Card != nil {
			t.Fatalf("after the approved turn: status %v, lastRun %v, card %v", after.Status, after.LastRunUUID, after.Card)
		}
		msgs := after.Messages
		if last := msgs[len(msgs)-1]; last.Notice != "approved_elsewhere: pages:1 (description)" {
			t.Errorf("last message = %+v, want the notice approved_elsewhere with the record written", last)
		}
		next := said(t, e, erika, id, "Weiter")
		if st := erika.MustRun(next.LastRunUUID); !st.HoldsProcessIs(true) || st.PredecessorRunUUID != pending {
			t.Errorf("the next turn = holdsProcess %v, predecessor %v", st.HoldsProcess, st.PredecessorRunUUID)
		}
	})
}

// A card denied, cancelled or whose process was ended
// elsewhere is handed back with a notice saying which.
func TestCardDecidedElsewhereSaysWhatHappened(t *testing.T) {
	cases := []struct {
		name, notice string
		release      func(t *testing.T, c *wt.Client, run string, digest string)
	}{
		{"denied", "denied_elsewhere", func(t *testing.T, c *wt.Client, run string, digest string) {
			c.Must("POST", "/api/runs/"+run+"/approval", wt.Approve{Approve: false, TurnDigest: digest}, 200)
		}},
		{"cancelled", "cancelled_elsewhere", func(t *testing.T, c *wt.Client, run string, _ string) {
			c.Must("POST", "/api/runs/"+run+"/cancel", nil, 200)
		}},
		{"process ended", "process_ended", func(t *testing.T, c *wt.Client, run string, _ string) {
			c.Must("POST", "/api/runs/"+run+"/end-process", nil, 200)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db)
				e.LLM.Add(write("c1", `{"description": "x"}`), answer("ok"))
				erika := e.As(wt.Erika)
				conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
				tc.release(t, erika, pendingRun(t, erika), conv.Card.TurnDigest)
				got := current(t, e, erika, conv.ID)
				if got.Status != "idle" || got.Card != nil || lastNotice(got) != tc.notice {
					t.Errorf("after %s elsewhere: status %v, card %v, notice %q", tc.name, got.Status, got.Card, lastNotice(got))
				}
			})
		})
	}
}

// restartedAndAnswered: the conversation is idle, and its transcript ends
// with the notice turn_restarted followed by answer.
func restartedAndAnswered(c wt.Conversation, answer string) bool {
	n := len(c.Messages)
	return c.Status == "idle" && n >= 2 && c.Messages[n-2].Notice == chat.NoticeTurnRestarted && c.Messages[n-1].Content == answer
}
