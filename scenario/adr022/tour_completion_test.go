package adr022_test

import (
	"net/http"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

func completion() llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "p", Name: "set_progress", Arguments: `{"current": 1, "total": 1, "completed": true}`}}}
}

// wantNoFailureNotice fails when a message of the conversation carries a notice.
func wantNoFailureNotice(t *testing.T, conv wt.Conversation) {
	t.Helper()
	for _, m := range conv.Messages {
		if m.Notice != "" {
			t.Errorf("the transcript shows the notice %q: %+v", m.Notice, conv.Messages)
		}
	}
}

// A tour whose process reports completion in its first turn
// (the origin) completes: the turn gets its closing answer, the run ends
// completed, the conversation goes idle with its summary and shows no
// failure or process_ended notice; the process is let go.
func TestCompletedTourCompletes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "a"}`), completion(), answer("Fertig."))
		erika := e.As(wt.Erika)
		conv := decided(t, e, erika, said(t, e, erika, opened(t, erika, seo).ID, "Los"), "apply")
		if conv.Status != "idle" || conv.Error != "" || conv.Card != nil {
			t.Fatalf("after completion: status %v error %v card %+v", conv.Status, conv.Error, conv.Card)
		}
		if last := conv.Messages[len(conv.Messages)-1]; last.Content != "Fertig." {
			t.Errorf("closing message = %+v", last)
		}
		wantNoFailureNotice(t, conv)
		if conv.Summary == nil || conv.Summary.Applied != 1 {
			t.Errorf("summary = %+v", conv.Summary)
		}
		st := erika.MustRun(conv.LastRunUUID)
		if st.Status != "completed" || st.TerminationReason != "completed" || !st.HoldsProcessIs(false) {
			t.Errorf("the completed run = status %v, reason %v, holdsProcess %v", st.Status, st.TerminationReason, st.HoldsProcess)
		}
	})
}

// A completion reported in a later turn releases the
// process for every turn of the lineage, the origin included: a turn
// continued from the first turn holds no process.
func TestCompletedTourReleasesTheProcessForEveryTurnOfItsLineage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "a"}`), answer("Weiter?"),
			write("c2", `{"seoTitle": "b"}`), completion(), answer("Fertig."), answer("ohne Prozess"))
		erika := e.As(wt.Erika)
		conv := decided(t, e, erika, said(t, e, erika, opened(t, erika, seo).ID, "Los"), "apply")
		origin := conv.LastRunUUID
		if st := erika.MustRun(origin); !st.HoldsProcessIs(true) {
			t.Fatalf("the first turn = %+v", st)
		}
		conv = decided(t, e, erika, said(t, e, erika, conv.ID, "Weiter"), "apply")
		if conv.Status != "idle" {
			t.Fatalf("after completion: %+v", conv)
		}
		wantNoFailureNotice(t, conv)
		if conv.Summary == nil || conv.Summary.Applied != 2 {
			t.Errorf("summary = %+v", conv.Summary)
		}
		last := erika.MustRun(conv.LastRunUUID)
		if last.Status != "completed" || last.TerminationReason != "completed" || !last.HoldsProcessIs(false) {
			t.Errorf("the completing turn = status %v, reason %v, holdsProcess %v", last.Status, last.TerminationReason, last.HoldsProcess)
		}
		if st := erika.MustRun(origin); !st.HoldsProcessIs(false) {
			t.Errorf("the origin still holds the process after completion: %v", st.HoldsProcess)
		}
		again, r := erika.StartRun(wt.StartRun{Configuration: 1, PredecessorRunUUID: origin,
			Messages: []wt.Message{{Role: "user", Content: "nochmal"}}})
		if r.Status != http.StatusCreated {
			t.Fatalf("POST /api/runs = %d, want 201: %s", r.Status, r.Body)
		}
		if again.Status != "completed" || !again.HoldsProcessIs(false) {
			t.Errorf("a turn continued from the origin = status %v, holdsProcess %v", again.Status, again.HoldsProcess)
		}
	})
}
