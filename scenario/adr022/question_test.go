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
func asked(t *testing.T, e *wt.Env, c *wt.Client) map[string]any {
	t.Helper()
	conv := send(t, e, c, start(t, c, seo)["id"].(float64), "Los")
	if conv["status"] != "awaiting_input" || conv["card"] != nil {
		t.Fatalf("the asking conversation: status %v, card %v", conv["status"], conv["card"])
	}
	return conv
}

func answerQuestion(c *wt.Client, conv map[string]any, body map[string]any) wt.Response {
	return c.Do("POST", "/api/conversations/"+itoa(conv["id"].(float64))+"/answer", body)
}

// Issue 11 item 4: a question can be answered in the chat. The conversation
// shows awaiting_input with the question, its options and its digest; an
// option resumes the run, the model gets the choice, the tour goes on.
func TestQuestionIsAnsweredInTheChatWithAnOption(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, questionSite, nil)
		e.LLM.Add(choose(false), answer("Formell also."))
		erika := e.As(wt.Erika)
		conv := asked(t, e, erika)
		q, ok := conv["question"].(map[string]any)
		if !ok || q["question"] != "Welche Tonalität?" || fmt.Sprint(q["options"]) != "[formell locker]" || q["freeText"] != false || q["turnDigest"] == "" {
			t.Fatalf("question = %v", conv["question"])
		}
		r := answerQuestion(erika, conv, map[string]any{"turnDigest": q["turnDigest"], "option": "formell"})
		if r.Status != http.StatusAccepted {
			t.Fatalf("answer = %d %s", r.Status, r.Body)
		}
		got := settled(t, e, erika, conv["id"].(float64))
		if got["status"] != "idle" || got["question"] != nil || transcriptHas(got, "formell") != 1 || transcriptHas(got, "Formell also.") != 1 {
			t.Fatalf("after the answer: status %v, question %v, messages %v", got["status"], got["question"], got["messages"])
		}
		reqs := e.LLM.Requests()
		if last := reqs[len(reqs)-1].Messages; !strings.Contains(last[len(last)-1].Content, `"choice":"formell"`) {
			t.Errorf("the model got %q", last[len(last)-1].Content)
		}
		if st := erika.Must("GET", "/api/runs/"+got["lastRunUuid"].(string), nil, 200).Map(t); st["status"] != "completed" || st["holdsProcess"] != true {
			t.Errorf("the answered run = %v, holdsProcess %v", st["status"], st["holdsProcess"])
		}
	})
}

// Issue 11 item 4: where the question allows it, the editor answers in her
// own words.
func TestQuestionIsAnsweredInTheChatWithFreeText(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, questionSite, nil)
		e.LLM.Add(choose(true), answer("Verstanden."))
		erika := e.As(wt.Erika)
		conv := asked(t, e, erika)
		q := conv["question"].(map[string]any)
		if q["freeText"] != true {
			t.Fatalf("question = %v", q)
		}
		answerQuestion(erika, conv, map[string]any{"turnDigest": q["turnDigest"], "text": "freundlich, aber knapp"})
		got := settled(t, e, erika, conv["id"].(float64))
		if got["status"] != "idle" || transcriptHas(got, "freundlich, aber knapp") != 1 {
			t.Fatalf("after the answer: %v", got)
		}
		reqs := e.LLM.Requests()
		if last := reqs[len(reqs)-1].Messages; !strings.Contains(last[len(last)-1].Content, `"text":"freundlich, aber knapp"`) {
			t.Errorf("the model got %q", last[len(last)-1].Content)
		}
	})
}

// Issue 11 item 4: a bad answer gets a clear error and changes nothing: an
// option the question does not offer, free text where it is not allowed,
// both at once, or a digest of another question.
func TestBadAnswerToAQuestionChangesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, questionSite, nil)
		e.LLM.Add(choose(false))
		erika := e.As(wt.Erika)
		conv := asked(t, e, erika)
		digest := conv["question"].(map[string]any)["turnDigest"]
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
			if r := answerQuestion(erika, conv, tc.body); r.Status != tc.status || r.ErrorCode() != tc.code {
				t.Errorf("answer %v = %d %s, want %d %s", tc.body, r.Status, r.Body, tc.status, tc.code)
			}
		}
		got := settled(t, e, erika, conv["id"].(float64))
		if got["status"] != "awaiting_input" || len(got["messages"].([]any)) != len(conv["messages"].([]any)) {
			t.Errorf("the bad answers changed the conversation: %v", got)
		}
		if st := erika.Must("GET", "/api/runs/"+pendingRunOf(t, db), nil, 200).Map(t); st["status"] != "waiting_for_input" {
			t.Errorf("the asking run = %v", st["status"])
		}
	})
}

// Issue 11 item 4, P.X2: a new message while the question waits withdraws
// that run like a waiting card; the next turn continues the process from it.
func TestPX2_NewMessageWithdrawsTheWaitingQuestion(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, questionSite, nil)
		e.LLM.Add(choose(false), answer("Gut, dann anders."))
		erika := e.As(wt.Erika)
		conv := asked(t, e, erika)
		asking := pendingRunOf(t, db)
		got := send(t, e, erika, conv["id"].(float64), "Frag nicht, mach einfach")
		if got["status"] != "idle" || got["question"] != nil {
			t.Fatalf("after the new message: status %v, question %v", got["status"], got["question"])
		}
		if st := erika.Must("GET", "/api/runs/"+asking, nil, 200).Map(t); st["status"] != "cancelled" {
			t.Errorf("the asking run = %v, want cancelled", st["status"])
		}
		if st := erika.Must("GET", "/api/runs/"+got["lastRunUuid"].(string), nil, 200).Map(t); st["holdsProcess"] != true || st["predecessorRunUuid"] != asking {
			t.Errorf("the next turn = holdsProcess %v, predecessor %v", st["holdsProcess"], st["predecessorRunUuid"])
		}
	})
}

// Issue 11 items 3 and 4: a question answered through the runs API is
// handed back with answered_elsewhere.
func TestQuestionAnsweredElsewhereIsHandedBack(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, questionSite, nil)
		e.LLM.Add(choose(false), answer("ok"))
		erika := e.As(wt.Erika)
		conv := asked(t, e, erika)
		erika.Must("POST", "/api/runs/"+pendingRunOf(t, db)+"/input",
			map[string]any{"turnDigest": conv["question"].(map[string]any)["turnDigest"], "values": map[string]any{"choice": "locker"}}, 200)
		got := settled(t, e, erika, conv["id"].(float64))
		if got["status"] != "idle" || got["question"] != nil || lastNotice(got) != "answered_elsewhere" {
			t.Errorf("after the answer elsewhere: status %v, question %v, notice %q", got["status"], got["question"], lastNotice(got))
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
