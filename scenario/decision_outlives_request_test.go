package scenario_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// postAndHangUp posts body as erika with a request that the client abandons
// once the scripted model got its nth request, that is once the decision was
// accepted and the resumed turn is calling the model.
func postAndHangUp(t *testing.T, e *wt.Env, path string, body any, nth int) {
	t.Helper()
	raw, _ := json.Marshal(body)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", e.URL+path, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+wt.Erika)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			t.Errorf("POST %s answered %d before the client hung up", path, resp.StatusCode)
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(e.LLM.Requests()) < nth {
		if time.Now().After(deadline) {
			t.Fatal("the resumed turn never called the model")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
}

// waitEnded polls the run until it is no longer running and returns it.
func waitEnded(t *testing.T, c *wt.Client, id string) wt.RunStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := wt.Decode[wt.RunStatus](t, c.Must("GET", "/api/runs/"+id, nil, 200))
		if st.Status != "running" {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run is still running after its client hung up: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An approval outlives its HTTP request. A client that
// disconnects after the approval was accepted does not leave the run
// running: the resumed turn runs detached from the request, as Run does,
// and completes.
func TestApprovalOutlivesItsHTTPRequest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		slow := answer("Done.")
		slow.Delay = 300 * time.Millisecond
		e.LLM.Add(toolCall("c1", "update_page_metadata", `{"page": 1, "fields": {"description": "`+description+`"}}`), slow)
		erika := e.As(wt.Erika)
		st := startRun(t, erika, 1, false)
		id := st.UUID
		postAndHangUp(t, e, "/api/runs/"+id+"/approval", map[string]any{"approve": true, "turnDigest": pendingDigest(t, st)}, 2)
		if got := waitEnded(t, erika, id); got.Status != "completed" || got.TerminationReason != "completed" {
			t.Fatalf("the approved run = status %v, reason %v", got.Status, got.TerminationReason)
		}
	})
}

// An answer to a question outlives its HTTP request too.
func TestInputOutlivesItsHTTPRequest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.Site, nil)
		slow := answer("Formal it is.")
		slow.Delay = 300 * time.Millisecond
		e.LLM.Add(toolCall("c1", "choose", `{"question": "Which tone?", "options": ["formal", "casual"]}`), slow)
		erika := e.As(wt.Erika)
		st := startRun(t, erika, 1, false)
		id := st.UUID
		postAndHangUp(t, e, "/api/runs/"+id+"/input", map[string]any{"turnDigest": pendingDigest(t, st), "values": map[string]any{"choice": "formal"}}, 2)
		if got := waitEnded(t, erika, id); got.Status != "completed" || got.TerminationReason != "completed" {
			t.Fatalf("the answered run = status %v, reason %v", got.Status, got.TerminationReason)
		}
	})
}
