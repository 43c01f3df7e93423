package adr022_test

import (
	"fmt"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// P.X1, P.X2: a conversation with a skill runs a guided process unless the
// skill is plain; then a write gets the process answers; a plain skill's
// write card offers approve and cancel.
func TestPX1_PX2_ProcessConversationsGetTheProcessAnswers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "first"}`), write("c2", `{"description": "second"}`))
		erika := e.As(wt.Erika)
		proc := start(t, erika, seo)
		if s := proc["skill"].(map[string]any); s["process"] != true || proc["tour"] == nil {
			t.Fatalf("process conversation = %v", proc)
		}
		proc = send(t, e, erika, proc["id"].(float64), "Los geht's")
		if proc["status"] != "awaiting_approval" || fmt.Sprint(answers(proc)) != "[apply variant skip keep]" {
			t.Fatalf("process card = %v", proc)
		}
		plain := start(t, erika, tone)
		plain = send(t, e, erika, plain["id"].(float64), "Please improve")
		if plain["status"] != "awaiting_approval" || fmt.Sprint(answers(plain)) != "[approve cancel]" {
			t.Fatalf("plain card = %v", plain)
		}
	})
}

// A message while a turn is queued or running answers 409; an ordinary
// conversation leaves its waiting run alone and refuses the message.
func TestBusyConversationRefusesMessages(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "x"}`))
		erika := e.As(wt.Erika)
		plain := send(t, e, erika, start(t, erika, tone)["id"].(float64), "go")
		if r := erika.Do("POST", "/api/conversations/"+itoa(plain["id"].(float64))+"/messages", map[string]any{"content": "more"}); r.Status != 409 {
			t.Fatalf("message to a waiting ordinary conversation = %d %s", r.Status, r.Body)
		}
	})
}

// The chosen answer's label goes into the transcript; an applied proposal
// writes, and its outcome is read from the run's steps.
func TestApplyWritesAndRecordsTheOutcome(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(write("c1", `{"description": "A new description"}`), answer("Erledigt."))
		erika := e.As(wt.Erika)
		conv := send(t, e, erika, start(t, erika, seo)["id"].(float64), "Los")
		conv = decide(t, e, erika, conv, "apply")
		if conv["status"] != "idle" {
			t.Fatalf("after apply: %v", conv)
		}
		msgs := conv["messages"].([]any)
		var labels []string
		for _, m := range msgs {
			labels = append(labels, m.(map[string]any)["content"].(string))
		}
		if fmt.Sprint(labels) != "[Los Übernehmen Erledigt.]" {
			t.Errorf("transcript = %v", labels)
		}
		out := conv["outcomes"].([]any)
		if len(out) != 1 || out[0].(map[string]any)["outcome"] != "applied" || out[0].(map[string]any)["table"] != "pages" {
			t.Fatalf("outcomes = %v", out)
		}
	})
}
