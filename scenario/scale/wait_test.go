package scale_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// waitPath is the read of conversation id that waits up to wait for a
// change from updatedAt after.
func waitPath(id int64, wait, after string) string {
	return path(id, "?"+url.Values{"wait": {wait}, "after": {after}}.Encode())
}

// (the bench's reads): GET /api/conversations/{id}?wait=&after=
// answers as soon as the conversation changed — here when the held model
// call returns and the turn shows its card — and, with no change, once the
// wait has passed, with the conversation as it was; bad values are 400 and
// another user's conversation is 404, as without a wait.
func TestAConversationReadWaitsForTheNextChange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, site, &wt.Options{Workers: 1, ChatWorkers: 1})
		hold := make(chan struct{})
		e.LLM.Add(llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "update_page_metadata",
			Arguments: `{"page": 1, "fields": {"description": "Neu"}}`}}, Hold: hold})
		erika := e.As(wt.Erika)
		id := start(t, erika)
		sent := wt.Decode[wt.ConversationStamp](t, erika.Must("POST", path(id, "/messages"), map[string]any{"content": "Los"}, http.StatusAccepted))
		if sent.Status != "processing" {
			t.Fatalf("after the message: %v", sent.Status)
		}
		after := sent.UpdatedAt

		for _, q := range []string{"?wait=abc&after=" + url.QueryEscape(after), "?wait=0s&after=" + url.QueryEscape(after),
			"?wait=31s&after=" + url.QueryEscape(after), "?wait=-1s&after=" + url.QueryEscape(after), "?wait=1s",
			"?after=" + url.QueryEscape(after), "?wait=1s&after=yesterday", "?wait=&after="} {
			if r := erika.Do("GET", path(id, q), nil); r.Status != http.StatusBadRequest || r.ErrorCode() != "bad_request" {
				t.Errorf("GET %s = %d %s, want 400 bad_request", q, r.Status, r.Body)
			}
		}
		if r := e.As(wt.Paula).Do("GET", waitPath(id, "1s", after), nil); r.Status != http.StatusNotFound {
			t.Errorf("another user's wait = %d %s, want 404", r.Status, r.Body)
		}

		// No change while the model call is held: the answer comes once the wait passed.
		t0 := time.Now()
		got := wt.Decode[wt.ConversationStamp](t, erika.Must("GET", waitPath(id, "300ms", after), nil, http.StatusOK))
		if took := time.Since(t0); took < 300*time.Millisecond {
			t.Errorf("an unchanged conversation answered after %v, before the wait of 300ms passed", took)
		}
		if got.Status != "processing" || got.UpdatedAt != after {
			t.Errorf("after the wait: status %v updatedAt %v, want processing %v", got.Status, got.UpdatedAt, after)
		}

		// A change answers the waiting read at once, long before its wait.
		type answer struct {
			took time.Duration
			resp wt.Response
		}
		done := make(chan answer, 1)
		go func() {
			t0 := time.Now()
			r := erika.Do("GET", waitPath(id, "25s", after), nil)
			done <- answer{time.Since(t0), r}
		}()
		for deadline := time.Now().Add(10 * time.Second); e.App.Chat.Waiters(id) == 0; {
			if time.Now().After(deadline) {
				t.Fatal("the waiting read never started waiting")
			}
			time.Sleep(time.Millisecond) // polling a condition: the waiter is in place
		}
		close(hold)
		a := <-done
		if a.resp.Status != http.StatusOK {
			t.Fatalf("waiting read = %d %s", a.resp.Status, a.resp.Body)
		}
		conv := wt.Decode[wt.ConversationStamp](t, a.resp)
		if conv.Status != "awaiting_approval" || conv.Card == nil || conv.UpdatedAt == after {
			t.Errorf("the waiting read answered %s", a.resp.Body)
		}
		if a.took > 10*time.Second {
			t.Errorf("the waiting read answered after %v; the change came at once", a.took)
		}
		if n := e.App.Chat.Waiters(id); n != 0 {
			t.Errorf("%d waiters left after the read answered", n)
		}
	})
}

// The fallback of the wait: a change committed by another process (the
// worker application on its own database handle, whose signal the API
// never sees) still answers the waiting read, through its periodic check.
func TestAWaitingReadSeesAChangeOfAnotherProcess(t *testing.T) {
	storetest.EachShared(t, func(t *testing.T, db *store.DB, another func() *store.DB) {
		api := wt.New(t, db, site, &wt.Options{APIOnly: true})
		wt.New(t, another(), "", &wt.Options{Workers: 1, ChatWorkers: 1})
		api.LLM.Add(write("c1", `{"description": "Neu"}`))
		erika := api.As(wt.Erika)
		id := start(t, erika)
		conv := wt.Decode[wt.ConversationStamp](t, erika.Must("POST", path(id, "/messages"), map[string]any{"content": "Los"}, http.StatusAccepted))
		for deadline := time.Now().Add(20 * time.Second); conv.Status == "processing"; {
			if time.Now().After(deadline) {
				t.Fatalf("still processing after 20s: %+v", conv)
			}
			conv = wt.Decode[wt.ConversationStamp](t, erika.Must("GET", waitPath(id, "10s", conv.UpdatedAt), nil, http.StatusOK))
		}
		if conv.Status != "awaiting_approval" {
			t.Errorf("after the worker's turn: %v", conv.Status)
		}
	})
}
