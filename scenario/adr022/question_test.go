package adr022_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// questionSite is site with choose among the process's tools.
var questionSite = strings.Replace(site, "set_progress]", "set_progress, choose]", 1)

func choose(freeText bool) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "q1", Name: "choose",
		Arguments: fmt.Sprintf(`{"question": "Welche Tonalität?", "options": ["formell", "locker"], "freeText": %t}`, freeText)}}}
}

// asked starts a process conversation whose first turn asks a question.
func asked(t *testing.T, e *wt.Env, c *wt.Client) wt.Conversation {
	t.Helper()
	conv := said(t, e, c, opened(t, c, seo).ID, "Los")
	if conv.Status != "awaiting_input" || conv.Card != nil || conv.Question == nil {
		t.Fatalf("the asking conversation: status %v, card %+v, question %+v", conv.Status, conv.Card, conv.Question)
	}
	return conv
}

// countSaid counts the messages of conv whose content is content.
func countSaid(conv wt.Conversation, content string) int {
	n := 0
	for _, m := range conv.Messages {
		if m.Content == content {
			n++
		}
	}
	return n
}

// noticeOf is the notice of the conversation's last message that has one.
func noticeOf(conv wt.Conversation) string {
	for i := len(conv.Messages) - 1; i >= 0; i-- {
		if n := conv.Messages[i].Notice; n != "" {
			return n
		}
	}
	return ""
}

// A question can be answered in the chat. The conversation
// shows awaiting_input with the question, its options and its digest; an
// option resumes the run, the model gets the choice, the tour goes on.
func TestQuestionIsAnsweredInTheChatWithAnOption(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, questionSite, nil)
		e.LLM.Add(choose(false), answer("Formell also."))
		erika := e.As(wt.Erika)
		conv := asked(t, e, erika)
		q := conv.Question
		if q.Question != "Welche Tonalität?" || fmt.Sprint(q.Options) != "[formell locker]" || q.FreeText || q.TurnDigest == "" {
			t.Fatalf("question = %+v", q)
		}
		r := erika.AnswerConversation(conv.ID, wt.Answer{TurnDigest: q.TurnDigest, Option: "formell"})
		if r.Status != http.StatusAccepted {
			t.Fatalf("answer = %d %s", r.Status, r.Body)
		}
		got := current(t, e, erika, conv.ID)
		if got.Status != "idle" || got.Question != nil || countSaid(got, "formell") != 1 || countSaid(got, "Formell also.") != 1 {
			t.Fatalf("after the answer: status %v, question %+v, messages %+v", got.Status, got.Question, got.Messages)
		}
		reqs := e.LLM.Requests()
		if last := reqs[len(reqs)-1].Messages; !strings.Contains(last[len(last)-1].Content, `"choice":"formell"`) {
			t.Errorf("the model got %q", last[len(last)-1].Content)
		}
		if st := erika.MustRun(got.LastRunUUID); st.Status != "completed" || !st.HoldsProcessIs(true) {
			t.Errorf("the answered run = %v, holdsProcess %v", st.Status, st.HoldsProcess)
		}
	})
}

// Where the question allows it, the editor answers in her
// own words.
func TestQuestionIsAnsweredInTheChatWithFreeText(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, questionSite, nil)
		e.LLM.Add(choose(true), answer("Verstanden."))
		erika := e.As(wt.Erika)
		conv := asked(t, e, erika)
		if !conv.Question.FreeText {
			t.Fatalf("question = %+v", conv.Question)
		}
		erika.AnswerConversation(conv.ID, wt.Answer{TurnDigest: conv.Question.TurnDigest, Text: "freundlich, aber knapp"})
		got := current(t, e, erika, conv.ID)
		if got.Status != "idle" || countSaid(got, "freundlich, aber knapp") != 1 {
			t.Fatalf("after the answer: %+v", got)
		}
		reqs := e.LLM.Requests()
		if last := reqs[len(reqs)-1].Messages; !strings.Contains(last[len(last)-1].Content, `"text":"freundlich, aber knapp"`) {
			t.Errorf("the model got %q", last[len(last)-1].Content)
		}
	})
}

// A bad answer gets a clear error and changes nothing: an
// option the question does not offer, free text where it is not allowed,
// both at once, or a digest of another question.
func TestBadAnswerToAQuestionChangesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, questionSite, nil)
		e.LLM.Add(choose(false))
		erika := e.As(wt.Erika)
		conv := asked(t, e, erika)
		digest := conv.Question.TurnDigest
		for _, tc := range []struct {
			body   map[string]any
			status int
			code   string
		}{
			{map[string]any{"turnDigest": digest, "option": "laut"}, 400, "bad_request"},
			{map[string]any{"turnDigest": digest, "text": "eigene Worte"}, 400, "bad_request"},
			{map[string]any{"turnDigest": digest, "option": "formell", "text": "x"}, 400, "bad_request"},
			{map[string]any{"turnDigest": digest, "option": "formell", "answer": "apply"}, 400, "bad_request"},
			{map[string]any{"turnDigest": "v1:other", "option": "formell"}, 409, "stale_card"},
			{map[string]any{"turnDigest": digest, "answer": "apply"}, 409, "stale_card"},
		} {
			if r := erika.Do("POST", "/api/conversations/"+itoa(float64(conv.ID))+"/answer", tc.body); r.Status != tc.status || r.ErrorCode() != tc.code {
				t.Errorf("answer %v = %d %s, want %d %s", tc.body, r.Status, r.Body, tc.status, tc.code)
			}
		}
		got := current(t, e, erika, conv.ID)
		if got.Status != "awaiting_input" || len(got.Messages) != len(conv.Messages) {
			t.Errorf("the bad answers changed the conversation: %+v", got)
		}
		if st := erika.MustRun(pendingRunOf(t, db)); st.Status != "waiting_for_input" {
			t.Errorf("the asking run = %v", st.Status)
		}
	})
}

// P.X2: a new message while the question waits withdraws
// that run like a waiting card; the next turn continues the process from it.
func TestPX2_NewMessageWithdrawsTheWaitingQuestion(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, questionSite, nil)
		e.LLM.Add(choose(false), answer("Gut, dann anders."))
		erika := e.As(wt.Erika)
		conv := asked(t, e, erika)
		asking := pendingRunOf(t, db)
		got := said(t, e, erika, conv.ID, "Frag nicht, mach einfach")
		if got.Status != "idle" || got.Question != nil {
			t.Fatalf("after the new message: status %v, question %+v", got.Status, got.Question)
		}
		if st := erika.MustRun(asking); st.Status != "cancelled" {
			t.Errorf("the asking run = %v, want cancelled", st.Status)
		}
		if st := erika.MustRun(got.LastRunUUID); !st.HoldsProcessIs(true) || st.PredecessorRunUUID != asking {
			t.Errorf("the next turn = holdsProcess %v, predecessor %v", st.HoldsProcess, st.PredecessorRunUUID)
		}
	})
}

// A question answered through the runs API is
// handed back with answered_elsewhere.
func TestQuestionAnsweredElsewhereIsHandedBack(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, questionSite, nil)
		e.LLM.Add(choose(false), answer("ok"))
		erika := e.As(wt.Erika)
		conv := asked(t, e, erika)
		erika.Must("POST", "/api/runs/"+pendingRunOf(t, db)+"/input",
			map[string]any{"turnDigest": conv.Question.TurnDigest, "values": map[string]any{"choice": "locker"}}, 200)
		got := current(t, e, erika, conv.ID)
		if got.Status != "idle" || got.Question != nil || noticeOf(got) != "answered_elsewhere" {
			t.Errorf("after the answer elsewhere: status %v, question %+v, notice %q", got.Status, got.Question, noticeOf(got))
		}
	})
}

// pendingRunOf is the uuid of the one run waiting for input.
func pendingRunOf(t *testing.T, db *store.DB) string {
	t.Helper()
	var id string
	if err := db.QueryRow(t.Context(), "SELECT uuid FROM runs WHERE status = 'waiting_for_input'").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
