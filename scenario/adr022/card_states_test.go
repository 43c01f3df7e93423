package adr022_test

import (
	"net/http"
	"testing"

	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// Issue 11 item 2: a decided card leaves. The conversation's card is null
// whenever it is not awaiting approval — while the answer runs and after —
// and answering the card that is no longer there answers 409 stale_card,
// not busy, and changes nothing.
func TestDecidedCardLeavesAndAStaleAnswerIsStaleCard(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "a"}`), answer("Erledigt."))
		erika := e.As(wt.Erika)
		conv := send(t, e, erika, start(t, erika, seo)["id"].(float64), "Los")
		id := itoa(conv["id"].(float64))
		card := conv["card"].(map[string]any)
		body := map[string]any{"turnDigest": card["turnDigest"], "answer": "apply"}
		accepted := erika.Must("POST", "/api/conversations/"+id+"/answer", body, http.StatusAccepted).Map(t)
		if accepted["status"] != "processing" || accepted["card"] != nil {
			t.Errorf("while the answer runs: status %v, card %v", accepted["status"], accepted["card"])
		}
		after := settled(t, e, erika, conv["id"].(float64))
		if after["status"] != "idle" || after["card"] != nil {
			t.Fatalf("after the answer: status %v, card %v", after["status"], after["card"])
		}
		r := erika.Do("POST", "/api/conversations/"+id+"/answer", body)
		if r.Status != http.StatusConflict || r.ErrorCode() != "stale_card" {
			t.Errorf("answering the decided card = %d %s, want 409 stale_card", r.Status, r.Body)
		}
		again := erika.Must("GET", "/api/conversations/"+id, nil, 200).Map(t)
		if len(again["messages"].([]any)) != len(after["messages"].([]any)) || again["status"] != "idle" {
			t.Errorf("the stale answer changed the conversation: %v", again)
		}
	})
}

// Issue 11 item 2: a conversation's error is cleared when a later turn succeeds.
func TestErrorIsClearedWhenALaterTurnSucceeds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(llmtest.Reply{Status: 400, ErrorMessage: "model gone"}, answer("Wieder da."))
		erika := e.As(wt.Erika)
		conv := send(t, e, erika, start(t, erika, tone)["id"].(float64), "Hallo")
		if conv["status"] != "failed" || conv["error"] == nil {
			t.Fatalf("the failed turn: status %v, error %v", conv["status"], conv["error"])
		}
		conv = send(t, e, erika, conv["id"].(float64), "Nochmal")
		if conv["status"] != "idle" || conv["error"] != nil {
			t.Errorf("after a successful turn: status %v, error %v", conv["status"], conv["error"])
		}
	})
}
