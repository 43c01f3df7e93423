package adr022_test

import (
	"net/http"
	"testing"

	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// A decided card leaves. The conversation's card is null
// whenever it is not awaiting approval — while the answer runs and after —
// and answering the card that is no longer there answers 409 stale_card,
// not busy, and changes nothing.
func TestDecidedCardLeavesAndAStaleAnswerIsStaleCard(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "a"}`), answer("Erledigt."))
		erika := e.As(wt.Erika)
		conv := said(t, e, erika, opened(t, erika, seo).ID, "Los")
		if conv.Card == nil {
			t.Fatalf("no card: %+v", conv)
		}
		body := wt.Answer{TurnDigest: conv.Card.TurnDigest, Answer: "apply"}
		r := erika.AnswerConversation(conv.ID, body)
		if r.Status != http.StatusAccepted {
			t.Fatalf("answer = %d, want 202: %s", r.Status, r.Body)
		}
		var accepted wt.Conversation
		r.JSON(t, &accepted)
		if accepted.Status != "processing" || accepted.Card != nil {
			t.Errorf("while the answer runs: status %v, card %+v", accepted.Status, accepted.Card)
		}
		after := current(t, e, erika, conv.ID)
		if after.Status != "idle" || after.Card != nil {
			t.Fatalf("after the answer: status %v, card %+v", after.Status, after.Card)
		}
		r = erika.AnswerConversation(conv.ID, body)
		if r.Status != http.StatusConflict || r.ErrorCode() != "stale_card" {
			t.Errorf("answering the decided card = %d %s, want 409 stale_card", r.Status, r.Body)
		}
		again := current(t, e, erika, conv.ID)
		if len(again.Messages) != len(after.Messages) || again.Status != "idle" {
			t.Errorf("the stale answer changed the conversation: %+v", again)
		}
	})
}

// A conversation's error is cleared when a later turn succeeds.
func TestErrorIsClearedWhenALaterTurnSucceeds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(llmtest.Reply{Status: 400, ErrorMessage: "model gone"}, answer("Wieder da."))
		erika := e.As(wt.Erika)
		conv := said(t, e, erika, opened(t, erika, tone).ID, "Hallo")
		if conv.Status != "failed" || conv.Error == "" {
			t.Fatalf("the failed turn: status %v, error %q", conv.Status, conv.Error)
		}
		conv = said(t, e, erika, conv.ID, "Nochmal")
		if conv.Status != "idle" || conv.Error != "" {
			t.Errorf("after a successful turn: status %v, error %q", conv.Status, conv.Error)
		}
	})
}
