package adr022_test

import (
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// P.X2, P.R4 (withdrawn): a new message while a process run waits withdraws
// it (the guarded cancel), the next turn continues the process from the
// withdrawn run, and nothing is written.
func TestPX2_NewMessageWithdrawsTheWaitingProposal(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "withdrawn proposal"}`), answer("Gut, anders."))
		erika := e.As(wt.Erika)
		conv := send(t, e, erika, start(t, erika, seo)["id"].(float64), "Los")
		if conv["status"] != "awaiting_approval" {
			t.Fatalf("conv = %v", conv)
		}
		conv = send(t, e, erika, conv["id"].(float64), "Lieber etwas anderes")
		if conv["status"] != "idle" || conv["card"] != nil {
			t.Fatalf("after the new message: %v", conv)
		}
		runs := erika.Must("GET", "/api/runs/"+conv["lastRunUuid"].(string), nil, 200).Map(t)
		if runs["holdsProcess"] != true {
			t.Errorf("the continuation lost the process: %v", runs)
		}
		var st string
		_ = db.QueryRow(t.Context(), "SELECT status FROM runs WHERE status = 'cancelled'").Scan(&st)
		if st != "cancelled" {
			t.Errorf("the withdrawn run was not cancelled")
		}
		var fields string
		_ = db.QueryRow(t.Context(), "SELECT fields FROM records WHERE tbl = 'pages' AND uid = 1").Scan(&fields)
		if strings.Contains(fields, "withdrawn proposal") {
			t.Error("the withdrawn proposal was written")
		}
	})
}

// End tour (item 11): withdraws the waiting run, ends the process, clears
// skill and card; applied changes and outcomes stay.
func TestEndTourWithdrawsAndEndsTheProcessKeepingWhatWasApplied(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "applied"}`), write("c2", `{"seoTitle": "second proposal"}`))
		erika := e.As(wt.Erika)
		conv := send(t, e, erika, start(t, erika, seo)["id"].(float64), "Los")
		conv = decide(t, e, erika, conv, "apply")
		if conv["status"] != "awaiting_approval" {
			t.Fatalf("second card = %v", conv)
		}
		ended := erika.Must("POST", "/api/conversations/"+itoa(conv["id"].(float64))+"/end-tour", nil, 200).Map(t)
		if ended["status"] != "idle" || ended["skill"] != nil || ended["card"] != nil {
			t.Fatalf("after end-tour: %v", ended)
		}
		if out := ended["outcomes"].([]any); len(out) != 1 || out[0].(map[string]any)["outcome"] != "applied" {
			t.Errorf("outcomes = %v", out)
		}
		run := erika.Must("GET", "/api/runs/"+ended["lastRunUuid"].(string), nil, 200).Map(t)
		if run["status"] != "cancelled" || run["holdsProcess"] != false {
			t.Errorf("the withdrawn run = %v", run)
		}
		var fields string
		_ = db.QueryRow(t.Context(), "SELECT fields FROM records WHERE tbl = 'pages' AND uid = 1").Scan(&fields)
		if !strings.Contains(fields, "applied") || strings.Contains(fields, "second proposal") {
			t.Errorf("page 1 = %s", fields)
		}
	})
}
