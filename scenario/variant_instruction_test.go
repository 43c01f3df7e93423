package scenario_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// variantWrite is a card of the tour's process: a new description of page 1.
func variantWrite(id, description string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: "update_page_metadata",
		Arguments: `{"page": 1, "fields": {"description": "` + description + `"}}`}}}
}

// wishOf is what the model received for call id in its newest request that
// answers it: the denial's fields, or nil when no request answered it yet.
func wishOf(t *testing.T, reqs []llmtest.RecordedRequest, id string) map[string]string {
	t.Helper()
	for i := len(reqs) - 1; i >= 0; i-- {
		for _, m := range reqs[i].Messages {
			if m.Role == llm.RoleTool && m.ToolCallID == id {
				var got map[string]string
				if err := json.Unmarshal([]byte(m.Content), &got); err != nil {
					t.Fatalf("the tool result of %s is no JSON object: %s", id, m.Content)
				}
				return got
			}
		}
	}
	return nil
}

// untilModelAnswered waits until the model received a request answering call id.
func untilModelAnswered(t *testing.T, e *wt.Env, id string) map[string]string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if got := wishOf(t, e.LLM.Requests(), id); got != nil {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the model never received the answer to %s", id)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition of the running application
	}
}

// refusedInstructions are answers whose instruction (a JSON string as sent,
// raw: a client's encoder would mend invalid UTF-8) is refused, 400 with
// the code, changing nothing.
var refusedInstructions = []struct {
	name, answer, instruction, code string
}{
	{"a NUL byte", "variant", `"k\u0000rzer"`, "invalid_text"},
	{"invalid UTF-8", "variant", "\"k\xffrzer\"", "invalid_text"},
	{"501 characters", "variant", `"` + strings.Repeat("ä", 501) + `"`, "bad_request"},
	{"with apply", "apply", `"kürzer"`, "bad_request"},
	{"with skip", "skip", `"kürzer"`, "bad_request"},
	{"with keep", "keep", `"kürzer"`, "bad_request"},
}

// "Andere Variante" in the chat with an instruction: the model's next
// request carries it beside the variant's denial, marked as the editor's
// wish, and the transcript shows it with the answer. An instruction that is
// too long, is not text, or comes with another answer is refused and
// changes nothing: the card still waits, the model is not asked, the page
// keeps its description.
func TestAVariantWithAnInstructionInTheChatReachesTheModelsNextRequest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.TourSite, nil)
		e.LLM.Add(variantWrite("c1", "Eine Beschreibung."), variantWrite("c2", "Kurz, aus Köln."))
		erika := e.As(wt.Erika)
		conv, r := erika.StartConversation(wt.StartConversation{Page: 1, Skill: wt.TourSkill})
		if r.Status != http.StatusCreated {
			t.Fatalf("start: %d %s", r.Status, r.Body)
		}
		erika.Must("POST", fmt.Sprintf("/api/conversations/%d/messages", conv.ID), map[string]string{"content": "Los"}, http.StatusAccepted)
		e.App.Chat.Wait()
		conv, _ = erika.Conversation(conv.ID)
		if conv.Status != "awaiting_approval" || conv.Card == nil {
			t.Fatalf("no card: %+v", conv)
		}
		before, asked, desc := conv.Card.TurnDigest, len(e.LLM.Requests()), pageDescription(t, db, 1)
		for _, c := range refusedInstructions {
			body := `{"turnDigest": "` + before + `", "answer": "` + c.answer + `", "instruction": ` + c.instruction + `}`
			if r := erika.Do("POST", fmt.Sprintf("/api/conversations/%d/answer", conv.ID), body); r.Status != http.StatusBadRequest || r.ErrorCode() != c.code {
				t.Errorf("%s: %d %s, want 400 %s", c.name, r.Status, r.Body, c.code)
			}
		}
		if r := erika.Do("POST", fmt.Sprintf("/api/conversations/%d/answer", conv.ID), map[string]any{"turnDigest": before, "text": "ja", "instruction": "kürzer"}); r.Status != http.StatusBadRequest || r.ErrorCode() != "bad_request" {
			t.Errorf("an instruction with a question's text: %d %s, want 400 bad_request", r.Status, r.Body)
		}
		e.App.Chat.Wait()
		if now, _ := erika.Conversation(conv.ID); now.Status != "awaiting_approval" || now.Card == nil || now.Card.TurnDigest != before || len(now.Messages) != len(conv.Messages) {
			t.Fatalf("after refused answers the card changed: %+v", now)
		}
		if n := len(e.LLM.Requests()); n != asked {
			t.Errorf("refused answers asked the model: %d requests, want %d", n, asked)
		}
		if now := pageDescription(t, db, 1); now != desc {
			t.Errorf("refused answers wrote the page: %s → %s", desc, now)
		}

		const wish = "Kürzer, mit dem Ortsnamen Köln"
		if r := erika.AnswerConversation(conv.ID, wt.Answer{TurnDigest: before, Answer: "variant", Instruction: wish}); r.Status != http.StatusAccepted {
			t.Fatalf("variant with an instruction: %d %s", r.Status, r.Body)
		}
		got := untilModelAnswered(t, e, "c1")
		if got["error"] != "approval_denied" || got["reason"] != "variant" || got["editor_wish_for_variant"] != wish {
			t.Errorf("the model received %v, want the variant's denial with the wish %q", got, wish)
		}
		e.App.Chat.Wait()
		after, _ := erika.Conversation(conv.ID)
		if after.Card == nil || after.Card.TurnDigest == before {
			t.Fatalf("no new variant's card: %+v", after)
		}
		shown := false
		for _, m := range after.Messages {
			shown = shown || (m.Role == "user" && strings.Contains(m.Content, wish))
		}
		if !shown {
			t.Errorf("the transcript does not show the wish: %+v", after.Messages)
		}
		// A variant without an instruction is the plain denial.
		e.LLM.Add(llmtest.Reply{Content: "Gut."})
		if r := erika.AnswerConversation(conv.ID, wt.Answer{TurnDigest: after.Card.TurnDigest, Answer: "variant"}); r.Status != http.StatusAccepted {
			t.Fatalf("variant: %d %s", r.Status, r.Body)
		}
		if got := untilModelAnswered(t, e, "c2"); got["reason"] != "variant" || got["editor_wish_for_variant"] != "" {
			t.Errorf("a variant without an instruction: the model received %v", got)
		}
	})
}

// The campaign review list's bulk "Andere Variante" with an instruction:
// each card's tour hands it to the model in its next request. A bad
// instruction is refused and changes nothing.
func TestAVariantWithAnInstructionFromTheCampaignReviewListReachesTheModelsNextRequest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, wt.TourSite, &wt.Options{Workers: 1})
		e.LLM.Add(variantWrite("c1", "Eine Beschreibung."), variantWrite("c2", "Kurz, aus Köln."))
		erika := e.As(wt.Erika)
		v := wt.Decode[campaignView](t, erika.Must("POST", "/api/campaigns", map[string]any{"process": "seo", "rootPage": 1}, http.StatusCreated))
		untilCampaign(t, erika, v.ID, "done", func(v campaignView) bool { return v.State == "done" && v.Counts.Proposals == 1 })
		list := wt.Decode[campaignCards](t, erika.Must("GET", fmt.Sprintf("/api/campaigns/%d/cards", v.ID), nil, http.StatusOK))
		if len(list.Cards) != 1 {
			t.Fatalf("cards: %+v", list)
		}
		c := list.Cards[0]
		refs := []map[string]any{{"conversation": c.Conversation, "turnDigest": c.TurnDigest}}
		asked := len(e.LLM.Requests())
		for _, bad := range refusedInstructions {
			body := fmt.Sprintf(`{"answer": "%s", "instruction": %s, "cards": [{"conversation": %d, "turnDigest": "%s"}]}`,
				bad.answer, bad.instruction, c.Conversation, c.TurnDigest)
			if r := erika.Do("POST", fmt.Sprintf("/api/campaigns/%d/answers", v.ID), body); r.Status != http.StatusBadRequest || r.ErrorCode() != bad.code {
				t.Errorf("%s: %d %s, want 400 %s", bad.name, r.Status, r.Body, bad.code)
			}
		}
		if again := wt.Decode[campaignCards](t, erika.Must("GET", fmt.Sprintf("/api/campaigns/%d/cards", v.ID), nil, http.StatusOK)); len(again.Cards) != 1 || again.Cards[0].TurnDigest != c.TurnDigest {
			t.Fatalf("after refused answers the review list changed: %+v", again)
		}
		if n := len(e.LLM.Requests()); n != asked {
			t.Errorf("refused answers asked the model: %d requests, want %d", n, asked)
		}

		const wish = "mit dem Ortsnamen"
		res := wt.Decode[struct{ Results []campaignResult }](t, erika.Must("POST", fmt.Sprintf("/api/campaigns/%d/answers", v.ID),
			map[string]any{"answer": "variant", "instruction": wish, "cards": refs}, http.StatusOK))
		if len(res.Results) != 1 || res.Results[0].Outcome != "answered" {
			t.Fatalf("the variant: %+v, want answered", res.Results)
		}
		if got := untilModelAnswered(t, e, "c1"); got["reason"] != "variant" || got["editor_wish_for_variant"] != wish {
			t.Errorf("the model received %v, want the variant's denial with the wish %q", got, wish)
		}
	})
}
