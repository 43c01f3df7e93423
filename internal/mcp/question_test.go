package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/chat"
	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// questionEnv is the tour fixture whose process may ask (choose), with a
// script that asks one question and then closes.
func questionEnv(t *testing.T) *wt.Env {
	t.Helper()
	e := wt.New(t, storetest.SQLite(t), strings.Replace(wt.TourSite, "set_progress]", "set_progress, choose]", 1), &wt.Options{Workers: 1})
	e.LLM.Add(llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "q1", Name: "choose",
		Arguments: `{"question": "Welche Tonalität?", "options": ["formell", "locker"], "freeText": true}`}}},
		llmtest.Reply{Content: "Gut, locker also."})
	return e
}

// A question is answered with answer_question when the client does not elicit.
func TestQuestionAnsweredThroughAnswerQuestion(t *testing.T) {
	e := questionEnv(t)
	cs := connect(t, e, wt.Erika, nil)
	v := view(t, "start_tour", call(t, cs, "start_tour", map[string]any{"page": 1, "language": 0, "process": "seo"}))
	if v.Status != chat.AwaitingInput || v.Question == nil || v.Question.Question != "Welche Tonalität?" {
		t.Fatalf("start_tour: %s question %+v, want the question", v.Status, v.Question)
	}
	if code := errorCode(t, call(t, cs, "answer_question", map[string]any{"conversation": v.ID, "turnDigest": v.Question.TurnDigest, "option": "laut"})); code == "" {
		t.Errorf("an option the question does not offer was taken")
	}
	v = view(t, "answer_question", call(t, cs, "answer_question", map[string]any{"conversation": v.ID, "turnDigest": v.Question.TurnDigest, "option": "locker"}))
	if v.Status != chat.Idle || v.Messages[len(v.Messages)-1].Content != "Gut, locker also." {
		t.Fatalf("after the answer: %s %+v, want the model's closing answer", v.Status, v.Messages)
	}
}

// A question is elicited with its options and a free-text field.
func TestQuestionAnsweredByElicitation(t *testing.T) {
	e := questionEnv(t)
	var schema string
	cs := connect(t, e, wt.Erika, func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		raw, _ := json.Marshal(req.Params.RequestedSchema)
		schema = req.Params.Message + " " + string(raw)
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"option": "locker"}}, nil
	})
	v := view(t, "start_tour", call(t, cs, "start_tour", map[string]any{"page": 1, "language": 0, "process": "seo"}))
	for _, want := range []string{"Welche Tonalität?", `"enum":["formell","locker"]`, `"text"`} {
		if !strings.Contains(schema, want) {
			t.Errorf("the elicitation lacks %s: %s", want, schema)
		}
	}
	if v.Status != chat.Idle || v.Messages[len(v.Messages)-1].Content != "Gut, locker also." {
		t.Fatalf("after the elicited answer: %s %+v, want the model's closing answer", v.Status, v.Messages)
	}
}
