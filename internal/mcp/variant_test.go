package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"waymark/internal/chat"
	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// answer_card's variant with an instruction: the model's next request
// carries it beside the variant's denial. An instruction with another
// answer, or one too long, is a tool error and the card still waits.
func TestAVariantWithAnInstructionThroughAnswerCardReachesTheModel(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.TourSite, &wt.Options{Workers: 1})
		w := func(id, desc string) llmtest.Reply {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: "update_page_metadata", Arguments: `{"page": 1, "fields": {"description": "` + desc + `"}}`}}}
		}
		e.LLM.Add(w("c1", "Eine Beschreibung."), w("c2", "Kurz."))
		cs := connect(t, e, wt.Erika, nil)
		v := view(t, "start_tour", call(t, cs, "start_tour", map[string]any{"page": 1, "language": 0, "process": "seo"}))
		if v.Status != chat.AwaitingApproval || v.Card == nil {
			t.Fatalf("no card: %s", v.Status)
		}
		asked := len(e.LLM.Requests())
		for name, args := range map[string]map[string]any{
			"with apply":     {"answer": "apply", "instruction": "kürzer"},
			"501 characters": {"answer": "variant", "instruction": strings.Repeat("ä", 501)},
		} {
			args["conversation"], args["turnDigest"] = v.ID, v.Card.TurnDigest
			if code := errorCode(t, call(t, cs, "answer_card", args)); code != "bad_request" {
				t.Errorf("%s: code %q, want bad_request", name, code)
			}
		}
		if after := view(t, "get_conversation", call(t, cs, "get_conversation", map[string]any{"conversation": v.ID})); after.Card == nil || after.Card.TurnDigest != v.Card.TurnDigest {
			t.Fatalf("after refused answers the card changed: %s", after.Status)
		}
		if n := len(e.LLM.Requests()); n != asked {
			t.Errorf("refused answers asked the model: %d requests, want %d", n, asked)
		}
		const wish = "mit dem Ortsnamen"
		view(t, "answer_card", call(t, cs, "answer_card", map[string]any{"conversation": v.ID, "turnDigest": v.Card.TurnDigest, "answer": "variant", "instruction": wish}))
		var got map[string]string
		for _, r := range e.LLM.Requests() {
			for _, m := range r.Messages {
				if m.Role == llm.RoleTool && m.ToolCallID == "c1" {
					_ = json.Unmarshal([]byte(m.Content), &got)
				}
			}
		}
		if got["reason"] != "variant" || got["editor_wish_for_variant"] != wish {
			t.Errorf("the model received %v, want the variant's denial with the wish %q", got, wish)
		}
	})
}
