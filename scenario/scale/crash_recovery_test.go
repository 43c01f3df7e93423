package scale_test

import (
	"net/http"
	"testing"
	"time"

	"waymark/internal/agent"
	"waymark/internal/chat"
	"waymark/internal/clock"
	"waymark/internal/invariant"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// A worker that stops in the middle of a turn — its
// model call hangs and nothing renews its lease, as after kill -9 — holds
// the conversation for one lease only: after it, the installation's reaper
// requeues the turn's run by the retry rules (it was not inside a write, and
// its request is stored), a surviving worker runs it again, and the
// conversation takes its answer, not after five minutes. When the stopped
// worker comes back late, its result changes nothing. (Regression: the
// turn was dead-lettered as not rebuildable.)
func TestAStoppedWorkersTurnIsRequeuedAfterOneLeaseAndAnswersOnASurvivor(t *testing.T) {
	storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
		clk := clock.NewFake(time.Now())
		api := wt.New(t, db, site, &wt.Options{APIOnly: true, Clock: clk})
		// The heartbeat of the stopped worker never beats within the test.
		stopped := wt.New(t, another(), "", &wt.Options{ChatWorkers: 1, Clock: clk, Heartbeat: agent.DefaultLease - time.Millisecond})
		arrived, hold := make(chan struct{}), make(chan struct{})
		api.LLM.Add(llmtest.Reply{Content: "zu spät", Arrived: arrived, Hold: hold})
		erika := api.As(wt.Erika)
		id := start(t, erika)
		erika.Must("POST", path(id, "/messages"), map[string]any{"content": "Los"}, http.StatusAccepted)
		select {
		case <-arrived:
		case <-time.After(20 * time.Second):
			t.Fatal("the worker did not call the model within 20s")
		}
		t.Cleanup(func() {
			select {
			case <-hold:
			default:
				close(hold)
			}
		})
		survivor := wt.New(t, another(), "", &wt.Options{Workers: 1, ChatWorkers: 1, Clock: clk})

		conv := read(t, erika, id)
		var turn string
		if err := db.QueryRow(t.Context(), "SELECT pending_run_uuid FROM conversations WHERE id = ?", id).Scan(&turn); err != nil {
			t.Fatal(err)
		}
		if conv.Status != "processing" || turn == "" {
			t.Fatalf("during the turn: status %v pending run %q", conv.Status, turn)
		}
		if r := erika.Do("POST", path(id, "/messages"), map[string]any{"content": "Hallo?"}); r.Status != http.StatusConflict {
			t.Fatalf("a message during the turn = %d %s, want 409", r.Status, r.Body)
		}

		api.LLM.Add(answer("Wieder da."))
		clk.Advance(61 * time.Second) // about a minute: the default lease and a second
		rep, err := survivor.App.Runtime.Reap(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Requeued != 1 || rep.DeadLettered != 0 {
			t.Fatalf("the reaper after one lease = %+v, want the turn requeued", rep)
		}
		conv = untilSettled(t, erika, id)
		if conv.Status != "idle" {
			t.Fatalf("the conversation once its turn ran again = %+v", conv)
		}
		msgs := conv.Messages
		if last := msgs[len(msgs)-1]; last.Content != "Wieder da." {
			t.Fatalf("closing message = %+v", last)
		}
		st := erika.MustRun(turn)
		if st.Status != "completed" || conv.LastRunUUID != turn {
			t.Fatalf("the requeued turn = %v, last run %v; want run %s completed", st.Status, conv.LastRunUUID, turn)
		}
		if n := modelCalls(t, survivor); n != 1 {
			t.Errorf("the survivor made %d model calls, want 1", n)
		}

		// The conversation goes on.
		api.LLM.Add(answer("Weiter."))
		erika.Must("POST", path(id, "/messages"), map[string]any{"content": "Noch einmal"}, http.StatusAccepted)
		conv = untilSettled(t, erika, id)
		msgs = conv.Messages
		if last := msgs[len(msgs)-1]; conv.Status != "idle" || last.Content != "Weiter." {
			t.Fatalf("after the next message: %+v", conv)
		}

		// The stopped worker comes back: its late answer is dropped.
		close(hold)
		stopped.App.Chat.Wait()
		late := read(t, erika, id)
		if late.Status != "idle" || len(late.Messages) != len(msgs) || late.LastRunUUID != conv.LastRunUUID {
			t.Errorf("the late result changed the conversation: %+v", late)
		}
		if st := erika.MustRun(turn); st.Status != "completed" || st.Answer == "zu spät" {
			t.Errorf("the late segment changed the turn: %+v", st)
		}
	})
}

// A chat answer is never silently dropped: a card answer accepted with 202
// whose job a worker took and then stopped with — before the decision
// reached the run, the job left running as kill -9 leaves it — is carried
// out after one lease, as a decision of the runs API is, not offered to the
// editor again (it was: the card came back and the answer was lost). Within
// the lease nothing changes; after it the reaper hands the job to the
// workers again and a surviving worker applies the change once. An answer
// whose job still waits in the queue is not lost, however long it waits.
func TestAnAnswerWhoseWorkerDiedBeforeItsClaimIsCarriedOutAfterALeaseNotOfferedAgain(t *testing.T) {
	storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
		ctx := t.Context()
		clk := clock.NewFake(time.Now())
		api := wt.New(t, db, site, &wt.Options{APIOnly: true, Clock: clk})
		first := wt.New(t, another(), "", &wt.Options{ChatWorkers: 1, Clock: clk})
		api.LLM.Add(write("c1", `{"description": "Neu"}`))
		erika := api.As(wt.Erika)
		id := start(t, erika)
		conv := send(t, api, erika, id, "Los")
		card := conv.Card
		if conv.Status != "awaiting_approval" || card == nil {
			t.Fatalf("after the message: %+v", conv)
		}
		// The only worker goes away; the answer's job waits in the queue.
		first.StopWorkers()
		erika.Must("POST", path(id, "/answer"), map[string]any{"turnDigest": card.TurnDigest, "answer": "apply"}, http.StatusAccepted)
		if n := gauge(t, api, "waymark_chat_jobs_pending"); n != 1 {
			t.Errorf("waymark_chat_jobs_pending with the answer queued = %v, want 1", n)
		}
		clk.Advance(10 * time.Minute)
		if c := read(t, erika, id); c.Status != "processing" {
			t.Fatalf("an answer waiting in the queue = %v, want processing", c.Status)
		}
		// A worker takes the job and stops before the decision reaches the run.
		if _, err := db.Exec(ctx, "UPDATE river_job SET state = 'running', attempt = 1, attempted_at = ? WHERE kind = 'waymark_chat' AND state = 'available'", clk.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		clk.Advance(30 * time.Second) // within the lease: its worker may be alive
		if _, err := api.App.Chat.Reap(ctx); err != nil {
			t.Fatal(err)
		}
		if c := read(t, erika, id); c.Status != "processing" || c.Card != nil {
			t.Fatalf("within the lease = status %v card %+v, want the answer still being carried out", c.Status, c.Card)
		}
		clk.Advance(time.Minute) // past the lease (60 s) since the worker took the job
		if _, err := api.App.Chat.Reap(ctx); err != nil {
			t.Fatal(err)
		}
		var state string
		if err := db.QueryRow(ctx, "SELECT state FROM river_job WHERE kind = 'waymark_chat' ORDER BY id DESC LIMIT 1").Scan(&state); err != nil {
			t.Fatal(err)
		}
		if state != "available" {
			t.Fatalf("after the reaper the answer's job is %s, want available again", state)
		}
		if c := read(t, erika, id); c.Status != "processing" || c.Card != nil {
			t.Fatalf("the lost answer after a lease = status %v card %+v, want it carried out, not the card offered again", c.Status, c.Card)
		}
		survivor := wt.New(t, another(), "", &wt.Options{Workers: 1, ChatWorkers: 1, Clock: clk})
		api.LLM.Add(answer("Erledigt."))
		c := untilSettled(t, erika, id)
		if c.Status != "idle" || c.Card != nil {
			t.Fatalf("after a worker took the answer again: %+v", c)
		}
		if o := c.Outcomes; len(o) != 1 || o[0].Outcome != "applied" {
			t.Errorf("outcomes = %+v, want one applied change", c.Outcomes)
		}
		answers := 0
		for _, m := range c.Messages {
			if m.Role == "user" && m.Content != "Los" {
				answers++
			}
		}
		if answers != 1 {
			t.Errorf("the transcript holds %d answers of the editor, want the one given: %+v", answers, c.Messages)
		}
		var writes int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM record_history WHERE field = 'description'").Scan(&writes); err != nil {
			t.Fatal(err)
		}
		if writes != 1 {
			t.Errorf("the description was written %d times, want once", writes)
		}
		if n := modelCalls(t, survivor); n != 1 {
			t.Errorf("the survivor made %d model calls, want 1", n)
		}
	})
}

// A conversation whose turn was lost is settled by the reaper, not only
// when someone reads it: a turn whose run ended while its worker died before
// the conversation took the answer, and a turn lost before its run began,
// move on at the reaper's pass with nobody reading them — the first takes
// its run's state, the second is started again once.
func TestALostTurnOfAConversationNobodyReadsIsSettledByTheReaper(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		clk := clock.NewFake(time.Now())
		e := wt.New(t, db, site, &wt.Options{Clock: clk})
		e.LLM.Add(answer("Erste Antwort."))
		erika := e.As(wt.Erika)
		id := start(t, erika)
		conv := send(t, e, erika, id, "Hallo")
		if conv.Status != "idle" {
			t.Fatalf("after the first message: %+v", conv)
		}
		status := func() string {
			t.Helper()
			var s string
			if err := db.QueryRow(ctx, "SELECT status FROM conversations WHERE id = ?", id).Scan(&s); err != nil {
				t.Fatal(err)
			}
			return s
		}
		// The worker died after the run ended, before the conversation took it.
		lost := clk.Now().UnixMicro()
		if _, err := db.Exec(ctx, "UPDATE conversations SET status = 'processing', pending_run_uuid = ?, updated_at = ? WHERE id = ?", conv.LastRunUUID, lost, id); err != nil {
			t.Fatal(err)
		}
		if n, err := e.App.Chat.Reap(ctx); err != nil || n != 0 || status() != "processing" {
			t.Fatalf("a reap within the lease = %d, %v, conversation %s; want it left alone", n, err, status())
		}
		clk.Advance(2 * time.Minute)
		if n, err := e.App.Chat.Reap(ctx); err != nil || n != 1 || status() != "idle" {
			t.Fatalf("a reap after the lease = %d, %v, conversation %s; want it settled idle", n, err, status())
		}
		// The next turn's job was lost before its run began.
		e.LLM.Add(answer("Zweite Antwort."))
		if _, err := db.Exec(ctx, `INSERT INTO conversation_messages (conversation_id, role, content, notice, created_at) VALUES (?, 'user', 'Noch etwas', '', ?)`, id, clk.Now().UnixMicro()); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, "UPDATE conversations SET status = 'processing', pending_run_uuid = '', updated_at = ? WHERE id = ?", clk.Now().UnixMicro(), id); err != nil {
			t.Fatal(err)
		}
		clk.Advance(2 * time.Minute)
		if n, err := e.App.Chat.Reap(ctx); err != nil || n != 1 {
			t.Fatalf("a reap of the turn lost before its run = %d, %v; want it started again", n, err)
		}
		e.App.Chat.Wait()
		c := read(t, erika, id)
		msgs := c.Messages
		if c.Status != "idle" || len(msgs) < 2 || msgs[len(msgs)-2].Notice != chat.NoticeTurnRestarted || msgs[len(msgs)-1].Content != "Zweite Antwort." {
			t.Fatalf("the restarted turn = %+v, want idle with the notice %s and its answer", c, chat.NoticeTurnRestarted)
		}
	})
}

// ADR-022 P.R2 (regression, found by the crash proof): a
// worker that carried a skip to the runtime — the runtime accepted it and
// the run went on to its next card — and died before the chat recorded the
// card's outcome and open point lost both: the conversation later showed
// the next card as if nothing had been skipped. The claim keeps the decided
// card, and the conversation released after one lease settles it from the
// run's events first: the skip's outcome and its open point are there,
// once, and the next card shows.
func TestASkipAcceptedByAWorkerThatDiedBeforeSettlingKeepsItsOpenPoint(t *testing.T) {
	storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
		ctx := t.Context()
		clk := clock.NewFake(time.Now())
		api := wt.New(t, db, site, &wt.Options{APIOnly: true, Clock: clk})
		first := wt.New(t, another(), "", &wt.Options{ChatWorkers: 1, Clock: clk})
		api.LLM.Add(write("c1", `{"seoTitle": "Neu"}`), write("c2", `{"description": "Neu"}`))
		erika := api.As(wt.Erika)
		id := start(t, erika)
		conv := send(t, api, erika, id, "Los")
		card := conv.Card
		if conv.Status != "awaiting_approval" || card == nil {
			t.Fatalf("after the message: %+v", conv)
		}
		first.StopWorkers()
		erika.Must("POST", path(id, "/answer"), map[string]any{"turnDigest": card.TurnDigest, "answer": "skip"}, http.StatusAccepted)
		// A worker takes the job, carries the skip to the runtime — the run
		// goes on to its next card — and dies before it settles the card.
		if _, err := db.Exec(ctx, "UPDATE river_job SET state = 'running', attempt = 1 WHERE kind = 'waymark_chat' AND state = 'available'"); err != nil {
			t.Fatal(err)
		}
		var owner int64
		var runUUID string
		if err := db.QueryRow(ctx, "SELECT owner_uid, pending_run_uuid FROM conversations WHERE id = ?", id).Scan(&owner, &runUUID); err != nil {
			t.Fatal(err)
		}
		res, err := api.App.Runtime.Approve(ctx, owner, runUUID, agent.Decision{TurnDigest: card.TurnDigest, Reason: agent.DenySkip})
		if err != nil || res.Status == nil || res.Status.Status != "waiting_for_approval" {
			t.Fatalf("the skip on the runtime = %+v, %v; want the next card", res.Status, err)
		}
		clk.Advance(2 * agent.DefaultLease)
		c := read(t, erika, id)
		next := c.Card
		if c.Status != "awaiting_approval" || next == nil || next.TurnDigest == card.TurnDigest {
			t.Fatalf("after the lost job: status %v card %+v, want the next card", c.Status, c.Card)
		}
		if o := c.Outcomes; len(o) != 1 || o[0].Outcome != "skipped" {
			t.Errorf("outcomes = %+v, want the skip", c.Outcomes)
		}
		if n := count(t, db, "SELECT COUNT(*) FROM open_points WHERE field = 'seoTitle'"); n != 1 {
			t.Errorf("open points of the skipped card = %d, want 1", n)
		}
		erika.Must("GET", path(id, ""), nil, 200) // a second read settles nothing again
		if n := count(t, db, "SELECT COUNT(*) FROM conversation_outcomes"); n != 1 {
			t.Errorf("outcomes after a second read = %d, want 1", n)
		}
		expect(t, "after the lost job", invariant.New(db, &invariant.Config{Clock: clk}))
	})
}

// (the full crash proof): the result of a turn the reaper
// requeued is handed to the conversation by the worker that finished it; it
// came late — after the editor had answered the card it showed and the
// decision was claimed — and put that card back on the conversation, so the
// editor saw it again and the next answer to it was refused as stale, with
// a "denied elsewhere" notice on their own decision. A late result now
// changes nothing once a decision on the run is claimed, and the decision
// is carried out as claimed.
func TestALateResultOfARequeuedTurnDoesNotUndoTheEditorsClaimedAnswer(t *testing.T) {
	storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
		ctx := t.Context()
		api := wt.New(t, db, site, &wt.Options{APIOnly: true})
		first := wt.New(t, another(), "", &wt.Options{ChatWorkers: 1})
		api.LLM.Add(write("c1", `{"seoTitle": "Neu"}`), write("c2", `{"description": "Neu"}`))
		erika := api.As(wt.Erika)
		id := start(t, erika)
		conv := send(t, first, erika, id, "Los")
		card := conv.Card
		if conv.Status != "awaiting_approval" || card == nil {
			t.Fatalf("after the message: %+v", conv)
		}
		first.StopWorkers() // the answer's job waits: the decision is claimed, not yet carried out
		erika.Must("POST", path(id, "/answer"), map[string]any{"turnDigest": card.TurnDigest, "answer": "skip"}, http.StatusAccepted)
		var runUUID string
		if err := db.QueryRow(ctx, "SELECT pending_run_uuid FROM conversations WHERE id = ?", id).Scan(&runUUID); err != nil {
			t.Fatal(err)
		}
		// The late hand-over of the requeued turn, as the worker that ran it
		// makes it (agent.Config.QueuedResult).
		api.App.Chat.QueuedResult(ctx, agent.Result{UUID: runUUID})
		if c := read(t, erika, id); c.Status != "processing" || c.Card != nil {
			t.Fatalf("after the late result: status %v card %+v, want processing with the answer claimed", c.Status, c.Card)
		}
		second := wt.New(t, another(), "", &wt.Options{ChatWorkers: 1})
		c := settled(t, second, erika, id)
		if c.Status != "awaiting_approval" || c.Card == nil || c.Card.TurnDigest == card.TurnDigest {
			t.Fatalf("after the decision: status %v card %+v, want the next card", c.Status, c.Card)
		}
		if o := c.Outcomes; len(o) != 1 || o[0].Outcome != "skipped" {
			t.Errorf("outcomes = %+v, want the skip", c.Outcomes)
		}
		for _, m := range c.Messages {
			if m.Notice != "" {
				t.Errorf("notice %q in the transcript: the editor's own decision is not one taken elsewhere", m.Notice)
			}
		}
		expect(t, "after the late result", invariant.New(db, nil))
	})
}
