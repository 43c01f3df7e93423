package scenario_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

const description = "Nordlicht Digital builds fast, accessible websites for companies in Hamburg and the north: planning, design, development, hosting and support from one team."

func toolCall(id, name, args string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: args}}, Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 5}}
}

func answer(s string) llmtest.Reply { return llmtest.Reply{Content: s} }

// standard: read the page, propose one write, finish.
func standard() []llmtest.Reply {
	return []llmtest.Reply{
		toolCall("c1", "read_page", `{"page": 1}`),
		toolCall("c2", "update_page_metadata", `{"page": 1, "fields": {"description": "`+description+`"}}`),
		answer("Done."),
	}
}

func startRun(t *testing.T, c *wt.Client, cfg int, queued bool) wt.RunStatus {
	t.Helper()
	return wt.Decode[wt.RunStatus](t, c.Must("POST", "/api/runs", map[string]any{"configuration": cfg, "queued": queued,
		"messages": []map[string]string{{"role": "user", "content": "Improve the description of page 1"}}}, http.StatusCreated))
}

func pendingDigest(t *testing.T, st wt.RunStatus) string {
	t.Helper()
	if st.Pending == nil {
		t.Fatalf("no pending decision: %+v", st)
	}
	return st.Pending.TurnDigest
}

func description1(t *testing.T, e *wt.Env) string {
	t.Helper()
	var fields string
	if err := e.DB.QueryRow(context.Background(), "SELECT fields FROM records WHERE tbl = 'pages' AND uid = 1").Scan(&fields); err != nil {
		t.Fatal(err)
	}
	return fields
}

// The model's replies are asked for whole by default and streamed with
// --model-stream (app.Config.ModelStream); the run is the same either way.
func TestRunReadsSuspendsIsApprovedWritesOnceAndCompletes(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole replies", true: "streamed replies"}[stream], func(t *testing.T) {
			runReadsSuspendsIsApprovedWritesOnceAndCompletes(t, stream)
		})
	}
}

func runReadsSuspendsIsApprovedWritesOnceAndCompletes(t *testing.T, stream bool) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, &wt.Options{ModelStream: stream})
		e.LLM.Add(standard()...)
		erika := e.As(wt.Erika)
		st := startRun(t, erika, 1, false)
		if st.Status != "waiting_for_approval" {
			t.Fatalf("status = %+v", st)
		}
		call := st.Pending.Calls[0]
		preview := call.Preview[0]
		if call.Tool != "update_page_metadata" || preview.Label != "Beschreibung" || preview.Proposed != description {
			t.Fatalf("card = %+v", call)
		}
		if m := preview.Measure; m.Min != 140 || m.Max != 160 || m.Count != len([]rune(description)) {
			t.Errorf("measure = %+v", m)
		}
		if strings.Contains(description1(t, e), "Nordlicht") {
			t.Fatal("written before the approval")
		}
		id := st.UUID
		done := wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs/"+id+"/approval", map[string]any{"approve": true, "turnDigest": pendingDigest(t, st)}, http.StatusOK))
		if done.Status != "completed" || done.TerminationReason != "completed" || done.Answer != "Done." {
			t.Fatalf("after approval: %+v", done)
		}
		if !strings.Contains(description1(t, e), "Nordlicht") {
			t.Fatal("the approved write did not happen")
		}
		var n int
		_ = db.QueryRow(context.Background(), "SELECT COUNT(*) FROM record_history WHERE tbl = 'pages' AND uid = 1").Scan(&n)
		if n != 1 {
			t.Fatalf("history rows = %d, want exactly one write", n)
		}
		// The answer is not stored at privacy metadata: a later read does not show it.
		// (answer is omitempty on the wire: absent and empty are one.)
		if got := wt.Decode[wt.RunStatus](t, erika.Must("GET", "/api/runs/"+id, nil, http.StatusOK)); got.Answer != "" {
			t.Errorf("stored answer visible: %v", got.Answer)
		}
		evs := wt.Decode[wt.Events](t, erika.Must("GET", "/api/runs/"+id+"/events?after=0", nil, http.StatusOK)).Events
		kinds := map[string]int{}
		for _, ev := range evs {
			kinds[ev.Kind]++
		}
		if kinds["tool_write"] != 1 || kinds["request"] != 1 || kinds["llm"] != 3 {
			t.Errorf("events = %v", kinds)
		}
		// The second request to the model carried the read's result; every request the key.
		reqs := e.LLM.Requests()
		if len(reqs) != 3 || reqs[0].Authorization != "Bearer sk-scenario-secret" || reqs[0].Stream != stream {
			t.Errorf("model requests: %d, auth %q, streamed %v (want %v)", len(reqs), reqs[0].Authorization, reqs[0].Stream, stream)
		}
	})
}

// A plain run's card offers approve or deny: a denial reaches the model as
// the fixed denial token, and a reason sent with it is dropped (P.R5).
func TestDenialOfAPlainRunReachesTheModelAsTheFixedToken(t *testing.T) {
	for _, reason := range []string{"", "variant", "skip", "keep"} {
		t.Run("reason="+reason, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := wt.New(t, db, wt.Site, nil)
				e.LLM.Add(standard()...)
				erika := e.As(wt.Erika)
				st := startRun(t, erika, 1, false)
				body := map[string]any{"approve": false, "turnDigest": pendingDigest(t, st)}
				if reason != "" {
					body["reason"] = reason
				}
				done := wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs/"+st.UUID+"/approval", body, http.StatusOK))
				if done.Status != "completed" {
					t.Fatalf("after denial: %+v", done)
				}
				reqs := e.LLM.Requests()
				last := reqs[len(reqs)-1].Messages
				got := last[len(last)-1].Content
				if !strings.Contains(got, `"error":"approval_denied"`) || strings.Contains(got, `"reason"`) {
					t.Errorf("model received %q", got)
				}
				if strings.Contains(description1(t, e), "Nordlicht") {
					t.Error("a denied write happened")
				}
			})
		})
	}
}

func TestApprovalRefusals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		e.LLM.Add(standard()...)
		erika, otto := e.As(wt.Erika), e.As(wt.Otto)
		st := startRun(t, erika, 1, false)
		id, digest := st.UUID, pendingDigest(t, st)
		cases := []struct {
			name   string
			client *wt.Client
			body   any
			status int
			code   string
		}{
			{"stale digest", erika, map[string]any{"approve": true, "turnDigest": "v1:00"}, 409, "stale_turn"},
			{"no digest", erika, map[string]any{"approve": true}, 400, "bad_request"},
			{"reason on an approval", erika, map[string]any{"approve": true, "turnDigest": digest, "reason": "skip"}, 400, "bad_request"},
			{"unknown reason", erika, map[string]any{"approve": false, "turnDigest": digest, "reason": "later"}, 400, "bad_request"},
			{"unknown key", erika, map[string]any{"approve": true, "turnDigest": digest, "extra": 1}, 400, "bad_request"},
			{"not json", erika, "{", 400, "bad_request"},
			{"someone else's run", otto, map[string]any{"approve": true, "turnDigest": digest}, 404, "not_found"},
		}
		for _, c := range cases {
			r := c.client.Do("POST", "/api/runs/"+id+"/approval", c.body)
			if r.Status != c.status || r.ErrorCode() != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
			}
		}
		// Unknown and invisible runs answer alike.
		a := otto.Do("GET", "/api/runs/"+id, nil)
		b := otto.Do("GET", "/api/runs/00000000-0000-4000-8000-000000000000", nil)
		if a.Status != 404 || b.Status != 404 || string(a.Body) != string(b.Body) {
			t.Errorf("invisible %d %s vs unknown %d %s", a.Status, a.Body, b.Status, b.Body)
		}
		if st := wt.Decode[wt.RunStatus](t, erika.Must("GET", "/api/runs/"+id, nil, 200)); st.Status != "waiting_for_approval" {
			t.Fatalf("refusals changed the run: %+v", st)
		}
		if strings.Contains(description1(t, e), "Nordlicht") {
			t.Fatal("a refused approval wrote")
		}
	})
}

func TestChangedPreviewIsRefusedAndShownAgain(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		e.LLM.Add(standard()...)
		erika := e.As(wt.Erika)
		st := startRun(t, erika, 1, false)
		id, digest := st.UUID, pendingDigest(t, st)
		if _, err := db.Exec(context.Background(), `UPDATE records SET fields = ? WHERE tbl = 'pages' AND uid = 1`, `{"title":"Home","description":"Edited meanwhile"}`); err != nil {
			t.Fatal(err)
		}
		r := erika.Do("POST", "/api/runs/"+id+"/approval", map[string]any{"approve": true, "turnDigest": digest})
		if r.Status != 409 || r.ErrorCode() != "preview_changed" {
			t.Fatalf("approval = %d %s", r.Status, r.Body)
		}
		st = wt.Decode[wt.RunStatus](t, erika.Must("GET", "/api/runs/"+id, nil, 200))
		cur := st.Pending.Calls[0].Preview[0].Current
		if cur != "Edited meanwhile" {
			t.Fatalf("the card does not show the current value: %v", cur)
		}
		erika.Must("POST", "/api/runs/"+id+"/approval", map[string]any{"approve": true, "turnDigest": pendingDigest(t, st)}, 200)
	})
}

func TestFourEyesSelfApprovalRefusedSecondApproverReleases(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		e.LLM.Add(standard()...)
		erika, paula, otto := e.As(wt.Erika), e.As(wt.Paula), e.As(wt.Otto)
		st := startRun(t, erika, 2, false)
		id, digest := st.UUID, pendingDigest(t, st)
		if st.Pending.ApproveBlocked != "second_approver" {
			t.Errorf("the initiator's card does not say a second person must release: %+v", st.Pending)
		}
		if r := erika.Do("POST", "/api/runs/"+id+"/approval", map[string]any{"approve": true, "turnDigest": digest}); r.Status != 403 || r.ErrorCode() != "self_approval" {
			t.Fatalf("self approval = %d %s", r.Status, r.Body)
		}
		if r := otto.Do("POST", "/api/runs/"+id+"/approval", map[string]any{"approve": true, "turnDigest": digest}); r.Status != 404 {
			t.Fatalf("approval by a user without the grant = %d %s", r.Status, r.Body)
		}
		inbox := wt.Decode[wt.Inbox](t, paula.Must("GET", "/api/inbox", nil, 200)).Runs
		if len(inbox) != 1 || inbox[0].UUID != id {
			t.Fatalf("paula's inbox = %+v", inbox)
		}
		if got := wt.Decode[wt.Inbox](t, erika.Must("GET", "/api/inbox", nil, 200)).Runs; len(got) != 0 {
			t.Errorf("erika's inbox lists her own four-eyes run: %+v", got)
		}
		done := wt.Decode[wt.RunStatus](t, paula.Must("POST", "/api/runs/"+id+"/approval", map[string]any{"approve": true, "turnDigest": digest}, 200))
		if done.Status != "completed" {
			t.Fatalf("after release: %+v", done)
		}
		var user int
		_ = db.QueryRow(context.Background(), "SELECT user_uid FROM record_history WHERE tbl = 'pages' AND uid = 1").Scan(&user)
		if user != 2 {
			t.Errorf("the write ran as user %d, want the initiator 2", user)
		}
	})
}

func TestSecondApprovalRacingTheFirstLoses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		e.LLM.Add(standard()...)
		erika := e.As(wt.Erika)
		st := startRun(t, erika, 1, false)
		id, digest := st.UUID, pendingDigest(t, st)
		var wg sync.WaitGroup
		codes := make([]int, 2)
		for i := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[i] = erika.Do("POST", "/api/runs/"+id+"/approval", map[string]any{"approve": true, "turnDigest": digest}).Status
			}()
		}
		wg.Wait()
		if !(codes[0] == 200 && codes[1] == 409 || codes[0] == 409 && codes[1] == 200) {
			t.Fatalf("two approvals answered %v, want one 200 and one 409", codes)
		}
		var n int
		_ = db.QueryRow(context.Background(), "SELECT COUNT(*) FROM record_history").Scan(&n)
		if n != 1 {
			t.Fatalf("%d writes, want 1", n)
		}
	})
}

func TestBadRunRequests(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		erika := e.As(wt.Erika)
		msgs := []map[string]string{{"role": "user", "content": "hi"}}
		cases := []struct {
			name   string
			body   any
			status int
			code   string
		}{
			{"unknown configuration", map[string]any{"configuration": 99, "messages": msgs}, 404, "configuration_not_found"},
			{"no messages", map[string]any{"configuration": 1}, 400, "bad_request"},
			{"system message from the caller", map[string]any{"configuration": 1, "messages": []map[string]string{{"role": "system", "content": "x"}}}, 400, "bad_request"},
			{"last message not the user's", map[string]any{"configuration": 1, "messages": []map[string]string{{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}}}, 400, "bad_request"},
			{"wrong type", map[string]any{"configuration": "one", "messages": msgs}, 400, "bad_request"},
			{"unknown key", map[string]any{"configuration": 1, "messages": msgs, "pin": "x"}, 400, "bad_request"},
			{"malformed", "{\"configuration\":", 400, "bad_request"},
		}
		for _, c := range cases {
			r := erika.Do("POST", "/api/runs", c.body)
			if r.Status != c.status || r.ErrorCode() != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
			}
		}
		var n int
		_ = db.QueryRow(context.Background(), "SELECT COUNT(*) FROM runs").Scan(&n)
		if n != 0 {
			t.Errorf("bad requests created %d runs", n)
		}
		if r := e.As("").Do("POST", "/api/runs", map[string]any{"configuration": 1, "messages": msgs}); r.Status != 401 {
			t.Errorf("without a token: %d", r.Status)
		}
	})
}

func TestBadToolArgumentsAreAnErrorResultForTheModel(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		e.LLM.Add(toolCall("c1", "read_page", `{"pgae": 1}`), toolCall("c2", "no_such_tool", `{}`), answer("sorry"))
		st := startRun(t, e.As(wt.Erika), 1, false)
		if st.Status != "completed" {
			t.Fatalf("status = %+v", st)
		}
		reqs := e.LLM.Requests()
		first := reqs[1].Messages[len(reqs[1].Messages)-1].Content
		second := reqs[2].Messages[len(reqs[2].Messages)-1].Content
		if !strings.Contains(first, `"error"`) || !strings.Contains(first, "page") || !strings.Contains(second, "unknown tool") {
			t.Errorf("tool results: %q / %q", first, second)
		}
	})
}

func TestProviderFailuresEndTheRunWithAReason(t *testing.T) {
	cases := []struct {
		name   string
		reply  llmtest.Reply
		reason string
		class  string
	}{
		{"garbage", llmtest.Reply{Garbage: true}, "provider_failed", "provider_bad_response"},
		{"rejected request", llmtest.Reply{Status: 400, ErrorMessage: "bad model"}, "provider_failed", "provider_not_retryable"},
		// A stream only exists when replies are streamed (--model-stream).
		{"stream cut mid tool call", llmtest.Reply{CutStream: true, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_page", Arguments: `{"page": 1}`}}}, "provider_failed", "provider_retryable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := wt.New(t, db, wt.Site, &wt.Options{ModelStream: c.reply.CutStream})
				for i := 0; i < 4; i++ { // the provider retries retryable failures three times
					e.LLM.Add(c.reply)
				}
				st := startRun(t, e.As(wt.Erika), 1, false)
				if st.Status != "failed" || st.TerminationReason != c.reason || st.ErrorClass != c.class {
					t.Fatalf("run = %+v", st)
				}
				var running int
				_ = db.QueryRow(context.Background(), "SELECT COUNT(*) FROM runs WHERE status = 'running' OR lease_owner <> ''").Scan(&running)
				if running != 0 {
					t.Errorf("%d runs left running or leased", running)
				}
			})
		})
	}
}

func TestQueuedRunIsWorkedAndEventsStreamLive(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, &wt.Options{Workers: 1})
		e.LLM.Add(standard()...)
		erika := e.As(wt.Erika)
		st := startRun(t, erika, 1, true)
		if st.Status != "queued" && st.Status != "running" {
			t.Fatalf("queued run answered %v", st.Status)
		}
		id := st.UUID
		// Follow the stream until the run waits for approval.
		req, _ := http.NewRequest("GET", e.URL+"/api/runs/"+id+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+wt.Erika)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("content type %q", ct)
		}
		sc := bufio.NewScanner(resp.Body)
		var kinds []string
		for sc.Scan() {
			line := sc.Text()
			if k, ok := strings.CutPrefix(line, "event: "); ok {
				kinds = append(kinds, k)
				if k == "approval" {
					break
				}
			}
		}
		if len(kinds) == 0 || kinds[0] != "request" || kinds[len(kinds)-1] != "approval" {
			t.Fatalf("streamed kinds %v", kinds)
		}
		st = wt.Decode[wt.RunStatus](t, erika.Must("GET", "/api/runs/"+id, nil, 200))
		done := wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs/"+id+"/approval", map[string]any{"approve": true, "turnDigest": pendingDigest(t, st)}, 200))
		if done.Status != "completed" {
			t.Fatalf("queued run after approval: %+v", done)
		}
	})
}

func TestCancelIfWaitingWinsOnlyFromWaiting(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		e.LLM.Add(standard()...)
		erika, paula := e.As(wt.Erika), e.As(wt.Paula)
		st := startRun(t, erika, 1, false)
		id := st.UUID
		if r := paula.Do("POST", "/api/runs/"+id+"/cancel-if-waiting", nil); r.Status != 404 {
			t.Errorf("approve-grant holder may not cancel: %d %s", r.Status, r.Body)
		}
		got := wt.Decode[wt.CancelIfWaiting](t, erika.Must("POST", "/api/runs/"+id+"/cancel-if-waiting", nil, 200))
		if !got.Won || got.Status != "cancelled" {
			t.Fatalf("first cancel-if-waiting = %+v", got)
		}
		got = wt.Decode[wt.CancelIfWaiting](t, erika.Must("POST", "/api/runs/"+id+"/cancel-if-waiting", nil, 200))
		if got.Won || got.Status != "cancelled" {
			t.Fatalf("second cancel-if-waiting = %+v", got)
		}
		if r := erika.Do("POST", "/api/runs/"+id+"/approval", map[string]any{"approve": true, "turnDigest": pendingDigest(t, st)}); r.Status != 409 {
			t.Errorf("approval of a cancelled run = %d", r.Status)
		}
	})
}

func TestChooseWaitsForInputAndResumesWithTheAnswer(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		e.LLM.Add(toolCall("c1", "choose", `{"question": "Which tone?", "options": ["formal", "casual"]}`), answer("Formal it is."))
		erika := e.As(wt.Erika)
		st := startRun(t, erika, 1, false)
		if st.Status != "waiting_for_input" {
			t.Fatalf("status = %+v", st)
		}
		p := st.Pending
		if p == nil || p.Kind != "input" || p.Question != "Which tone?" {
			t.Fatalf("pending = %+v", p)
		}
		id := st.UUID
		if r := erika.Do("POST", "/api/runs/"+id+"/input", wt.Input{TurnDigest: p.TurnDigest, Values: map[string]any{"choice": "loud"}}); r.Status != 400 || r.ErrorCode() != "bad_input" {
			t.Fatalf("an answer outside the options = %d %s", r.Status, r.Body)
		}
		if r := e.As(wt.Otto).Do("POST", "/api/runs/"+id+"/input", wt.Input{TurnDigest: p.TurnDigest, Values: map[string]any{"choice": "formal"}}); r.Status != 404 {
			t.Fatalf("another user's answer = %d", r.Status)
		}
		done := wt.Decode[wt.RunStatus](t, erika.Must("POST", "/api/runs/"+id+"/input", wt.Input{TurnDigest: p.TurnDigest, Values: map[string]any{"choice": "formal"}}, 200))
		if done.Status != "completed" || done.Answer != "Formal it is." {
			t.Fatalf("after the answer: %+v", done)
		}
		reqs := e.LLM.Requests()
		if got := reqs[1].Messages[len(reqs[1].Messages)-1].Content; !strings.Contains(got, `"choice":"formal"`) {
			t.Errorf("the model got %q", got)
		}
	})
}
