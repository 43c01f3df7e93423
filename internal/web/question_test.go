package web_test

import (
	"net/url"
	"regexp"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

var questionDigest = regexp.MustCompile(`hx-post="/chat/\d+/question"[^>]*>\s*<input type="hidden" name="turnDigest" value="([^"]+)"`)

// Screen 4: a question (choose) shows its options as buttons; choosing one
// answers it and the turn goes on.
func TestQuestionShowsItsOptionsAsButtons(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.LLM.Add(llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "q1", Name: "choose",
			Arguments: `{"question": "Welcher Ton passt?", "options": ["Sachlich", "Locker"]}`}}}, say("Dann sachlich."))
		b := login(t, e, "erika", "erika-pass-1234")
		path := startTour(t, b, "1", "0", "0")
		b.post(path+"/messages", url.Values{"content": {"Schreib die Begrüßung neu."}})
		e.App.Chat.Wait()
		page := b.get(path)
		contains(t, "question", page, `<h3 id="question-heading-`, "Welcher Ton passt?",
			`<button type="submit" name="option" value="Sachlich">Sachlich</button>`, `value="Locker">Locker</button>`,
			"Wartet auf deine Antwort")
		m := questionDigest.FindStringSubmatch(page.Body)
		if m == nil {
			t.Fatalf("no question form in:\n%s", page.Body)
		}
		bad := b.post(path+"/question", url.Values{"turnDigest": {m[1]}, "option": {"Laut"}})
		contains(t, "an option the question does not offer", bad, `role="alert"`, "Welcher Ton passt?")
		b.post(path+"/question", url.Values{"turnDigest": {m[1]}, "option": {"Sachlich"}})
		e.App.Chat.Wait()
		after := b.get(path + "/view")
		contains(t, "after the answer", after, "<p>Sachlich</p>", "Dann sachlich.")
		lacks(t, "after the answer", after, `name="option"`)
	})
}
