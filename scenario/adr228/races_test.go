package adr228_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// L7.7, L7.5: ending the process while a turn of its lineage runs: the turn
// finishes the provider call it is in, then stops before its next tool call,
// settled failed with process_ended, and the tool never runs.
func TestL7_7_EndProcessWhileATurnRunsStopsItBeforeTheNextToolCall(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(answer("one"),
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_page", Arguments: `{"page": 1}`}}, Delay: 800 * time.Millisecond})
		erika := e.As(wt.Erika)
		first := invoke(t, erika, 1, nil)
		origin := first["uuid"].(string)
		done := make(chan map[string]any, 1)
		go func() { done <- continueRun(t, erika, 1, origin) }()
		deadline := time.Now().Add(10 * time.Second)
		for len(e.LLM.Requests()) < 2 {
			if time.Now().After(deadline) {
				t.Fatal("the second turn never called the model")
			}
			time.Sleep(5 * time.Millisecond)
		}
		// L7.3: the running turn itself is left alone; the caller asks again.
		var running string
		_ = db.QueryRow(context.Background(), "SELECT uuid FROM runs WHERE status = 'running'").Scan(&running)
		if left := wt.Decode[wt.Ended](t, erika.Must("POST", "/api/runs/"+running+"/end-process", nil, 200)); left.Ended || left.Status != "running" {
			t.Fatalf("end-process of the running turn = %+v", left)
		}
		ended := wt.Decode[wt.Ended](t, erika.Must("POST", "/api/runs/"+origin+"/end-process", nil, 200))
		if !ended.Ended || ended.Status != "completed" {
			t.Fatalf("end-process of the terminal origin = %+v", ended)
		}
		second := <-done
		if second["status"] != "failed" || second["terminationReason"] != "process_ended" || second["holdsProcess"] != false {
			t.Fatalf("the running turn = %v", second)
		}
		evs := wt.Decode[wt.Events](t, erika.Must("GET", "/api/runs/"+second["uuid"].(string)+"/events?after=0", nil, 200)).Events
		for _, ev := range evs {
			if ev.Kind == "tool" {
				t.Fatal("the tool call ran after the process ended")
			}
		}
	})
}

// L7.5: two continuations of one run in parallel both carry the process; an
// end through one of them releases the origin, and the other says it holds none.
func TestL7_5_TwoParallelContinuationsAndAnEndThroughOne(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		e.LLM.Add(answer("one"), answer("a"), answer("b"), answer("after"))
		erika := e.As(wt.Erika)
		origin := invoke(t, erika, 1, nil)["uuid"].(string)
		var wg sync.WaitGroup
		turns := make([]map[string]any, 2)
		for i := range turns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				turns[i] = continueRun(t, erika, 1, origin)
			}()
		}
		wg.Wait()
		for i, st := range turns {
			if st["status"] != "completed" || st["holdsProcess"] != true {
				t.Fatalf("parallel turn %d = %v", i, st)
			}
		}
		a, b := turns[0]["uuid"].(string), turns[1]["uuid"].(string)
		if got := wt.Decode[wt.Ended](t, erika.Must("POST", "/api/runs/"+a+"/end-process", nil, 200)); !got.Ended {
			t.Fatalf("end-process = %+v", got)
		}
		for _, id := range []string{origin, a, b} {
			if st := wt.Decode[wt.RunStatus](t, erika.Must("GET", "/api/runs/"+id, nil, 200)); !st.HoldsProcessIs(false) {
				t.Errorf("run %s still holds the process", id)
			}
		}
		if next := continueRun(t, erika, 1, b); next["holdsProcess"] != false || next["status"] != "completed" {
			t.Fatalf("a continuation of the parallel turn = %v", next)
		}
	})
}
