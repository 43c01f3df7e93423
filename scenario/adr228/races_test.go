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
		first := startSEO(t, erika, 1)
		origin := first.UUID
		done := make(chan wt.RunStatus, 1)
		go func() { done <- continued(t, erika, 1, origin, false) }()
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
		if second.Status != "failed" || second.TerminationReason != "process_ended" || !second.HoldsProcessIs(false) {
			t.Fatalf("the running turn = %+v", second)
		}
		evs := wt.Decode[wt.Events](t, erika.Must("GET", "/api/runs/"+second.UUID+"/events?after=0", nil, 200)).Events
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
		origin := startSEO(t, erika, 1).UUID
		var wg sync.WaitGroup
		turns := make([]wt.RunStatus, 2)
		for i := range turns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				turns[i] = continued(t, erika, 1, origin, false)
			}()
		}
		wg.Wait()
		for i, st := range turns {
			if st.Status != "completed" || !st.HoldsProcessIs(true) {
				t.Fatalf("parallel turn %d = %+v", i, st)
			}
		}
		a, b := turns[0].UUID, turns[1].UUID
		if got := wt.Decode[wt.Ended](t, erika.Must("POST", "/api/runs/"+a+"/end-process", nil, 200)); !got.Ended {
			t.Fatalf("end-process = %+v", got)
		}
		for _, id := range []string{origin, a, b} {
			if st := wt.Decode[wt.RunStatus](t, erika.Must("GET", "/api/runs/"+id, nil, 200)); !st.HoldsProcessIs(false) {
				t.Errorf("run %s still holds the process", id)
			}
		}
		if next := continued(t, erika, 1, b, false); !next.HoldsProcessIs(false) || next.Status != "completed" {
			t.Fatalf("a continuation of the parallel turn = %+v", next)
		}
	})
}
