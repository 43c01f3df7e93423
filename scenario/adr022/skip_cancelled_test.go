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
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
		if conv.Status != "awaiting_approval" {
			t.Fatalf("conv = %+v", conv)
		}
		id := waitingRun(t, db)
		runUUID.Store(id)
		decided(t, e, erika, conv, "skip")
		if n := cancelled.Load(); n != 1 {
			t.Fatalf("the cancel did not land (%d)", n)
		}
		if run, r := erika.Run(id); r.Status != http.StatusOK || run.Status != "cancelled" {
			t.Fatalf("run = %d %+v, want cancelled", r.Status, run)
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
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
		if conv.Card == nil {
			t.Fatalf("conv = %+v", conv)
		}
		if _, r := erika.CancelRun(waitingRun(t, db)); r.Status != http.StatusOK {
			t.Fatalf("cancel = %d: %s", r.Status, r.Body)
		}
		erika.AnswerConversation(conv.ID, wt.Answer{TurnDigest: conv.Card.TurnDigest, Answer: "skip"})
		e.App.Chat.Wait()
		if n := countPoints(t, db); n != 0 {
			t.Errorf("the skip of a cancelled run recorded %d open points", n)
		}
	})
}
