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
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
		if conv.Status != "awaiting_approval" {
			t.Fatalf("conv = %+v", conv)
		}
		conv = said(t, e, erika, conv.ID, "Lieber etwas anderes")
		if conv.Status != "idle" || conv.Card != nil {
			t.Fatalf("after the new message: %+v", conv)
		}
		if run := erika.MustRun(conv.LastRunUUID); !run.HoldsProcessIs(true) {
			t.Errorf("the continuation lost the process: %+v", run)
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
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
		conv = decided(t, e, erika, conv, "apply")
		if conv.Status != "awaiting_approval" {
			t.Fatalf("second card = %+v", conv)
		}
		ended, r := erika.EndTour(conv.ID)
		if r.Status != 200 {
			t.Fatalf("end-tour = %d, want 200: %s", r.Status, r.Body)
		}
		if ended.Status != "idle" || ended.Skill != nil || ended.Card != nil {
			t.Fatalf("after end-tour: %+v", ended)
		}
		if out := ended.Outcomes; len(out) != 1 || out[0].Outcome != "applied" {
			t.Errorf("outcomes = %+v", out)
		}
		run := erika.MustRun(ended.LastRunUUID)
		if run.Status != "cancelled" || !run.HoldsProcessIs(false) {
			t.Errorf("the withdrawn run = %+v", run)
		}
		var fields string
		_ = db.QueryRow(t.Context(), "SELECT fields FROM records WHERE tbl = 'pages' AND uid = 1").Scan(&fields)
		if !strings.Contains(fields, "applied") || strings.Contains(fields, "second proposal") {
			t.Errorf("page 1 = %s", fields)
		}
	})
}
