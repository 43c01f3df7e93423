package adr022_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// P.R4 (a cancelled run): a skip whose run is cancelled records nothing —
// also when the cancel lands while the run continues after the accepted
// skip (here: while the model answers the skip's continuation).
func TestPR4_ASkipWhoseRunIsCancelledRecordsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		erika := e.As(wt.Erika)
		// The hook runs on the model server's goroutine: it shares these through atomics.
		var runUUID atomic.Value
		var cancelled atomic.Int32
		next := answer("weiter")
		next.Before = func() { // the skip was accepted; the run continues
			if r := erika.Do("POST", "/api/runs/"+runUUID.Load().(string)+"/cancel", nil); r.Status == http.StatusOK {
				cancelled.Add(1)
			}
		}
		e.LLM.Add(write("c1", `{"description": "x"}`), next)
		conv := send(t, e, erika, start(t, erika, seo)["id"].(float64), "Los")
		if conv["status"] != "awaiting_approval" {
			t.Fatalf("conv = %v", conv)
		}
		id := waitingRun(t, db)
		runUUID.Store(id)
		decide(t, e, erika, conv, "skip")
		if n := cancelled.Load(); n != 1 {
			t.Fatalf("the cancel did not land (%d)", n)
		}
		if run := erika.Must("GET", "/api/runs/"+id, nil, 200).Map(t); run["status"] != "cancelled" {
			t.Fatalf("run = %v, want cancelled", run)
		}
		if n := countPoints(t, db); n != 0 {
			t.Errorf("the skip of a cancelled run recorded %d open points", n)
		}
	})
}

// waitingRun is the uuid of the one run waiting for an approval.
func waitingRun(t *testing.T, db *store.DB) string {
	t.Helper()
	var id string
	_ = db.QueryRow(t.Context(), "SELECT uuid FROM runs WHERE status = 'waiting_for_approval'").Scan(&id)
	if id == "" {
		t.Fatal("no waiting run")
	}
	return id
}

// P.R4 (a cancelled run): a skip sent for a card whose run was cancelled
// while it waited records nothing, whatever the answer's status.
func TestPR4_ASkipForARunCancelledWhileItWaitedRecordsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		erika := e.As(wt.Erika)
		e.LLM.Add(write("c1", `{"description": "x"}`))
		conv := send(t, e, erika, start(t, erika, seo)["id"].(float64), "Los")
		card, _ := conv["card"].(map[string]any)
		if card == nil {
			t.Fatalf("conv = %v", conv)
		}
		erika.Must("POST", "/api/runs/"+waitingRun(t, db)+"/cancel", nil, http.StatusOK)
		erika.Do("POST", "/api/conversations/"+itoa(conv["id"].(float64))+"/answer",
			map[string]any{"turnDigest": card["turnDigest"], "answer": "skip"})
		e.App.Chat.Wait()
		if n := countPoints(t, db); n != 0 {
			t.Errorf("the skip of a cancelled run recorded %d open points", n)
		}
	})
}
