package waymarktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
)

// TourSite is Site with an approved process skill "seo" (uid TourSkill)
// attached to the configuration "chat": the fixture of Tour.
const TourSite = Site + `
skillSources:
  - {uid: 2, type: backend, title: Site, trustLevel: first_party}
skills:
  - uid: 12
    source: 2
    identifier: seo
    enabled: true
    markdown: "---\nname: SEO optimieren\ndescription: Die Seite verbessern.\nprocess: true\nallowed-tools: [read_page, update_page_metadata, update_content, set_progress]\n---\nEine Änderung pro Schritt."
approvals:
  - {skill: 12, digest: current, approvedBy: 1}
attachments:
  - {configuration: 1, skill: 12, loadMode: always}
`

// TourSkill is the uid of TourSite's process skill.
const TourSkill = 12

// TourAnswers are the answers Tour gives its cards, in order.
var TourAnswers = []string{"apply", "variant", "skip", "keep"}

// TourScript is the model's part of one Tour: a card per answer of
// TourAnswers (writes of page 1's metadata; the variant's card is followed
// by its new variant, skipped), the tour's completion and a closing answer.
func TourScript() []llmtest.Reply {
	w := func(id, fields string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: "update_page_metadata", Arguments: `{"page": 1, "fields": ` + fields + `}`}}}
	}
	return []llmtest.Reply{
		w("c1", `{"description": "Eine neue Beschreibung."}`),
		w("c2", `{"seoTitle": "Startseite"}`),
		w("c3", `{"seoTitle": "Willkommen"}`),
		w("c4", `{"keywords": "home, start"}`),
		{ToolCalls: []llm.ToolCall{{ID: "p", Name: "set_progress", Arguments: `{"current": 4, "total": 4, "completed": true}`}}},
		{Content: "Fertig."},
	}
}

// TourStep is where a Tour stopped.
type TourStep struct {
	Conversation int64
	Step         string         // "start", "message", an answer of TourAnswers, "end"
	Status       int            // the HTTP status of the step's request
	Body         []byte         // its answer
	View         map[string]any // the conversation as last read ("" before it exists)
}

// Tour drives one whole guided tour through the chat API as c: start a
// conversation about page 1 with the process TourSkill, send a message,
// answer the cards with TourAnswers, end the tour. The model's replies must
// have been added (TourScript). It stops at the first answer that is not
// what a tour without faults gets and returns where, with an error; it
// never fails the test itself, so fault tests can go on from there.
func (c *Client) Tour() (TourStep, error) {
	at := TourStep{Step: "start"}
	r := c.Do("POST", "/api/conversations", map[string]any{"page": 1, "language": 0, "skill": TourSkill})
	if r.Status != http.StatusCreated {
		return at.fail(r, "want 201")
	}
	var created struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(r.Body, &created); err != nil {
		return at.fail(r, "unreadable conversation")
	}
	at.Conversation = created.ID
	base := "/api/conversations/" + strconv.FormatInt(created.ID, 10)
	at.Step = "message"
	if r = c.Do("POST", base+"/messages", map[string]any{"content": "Los"}); r.Status != http.StatusAccepted {
		return at.fail(r, "want 202")
	}
	for _, answer := range TourAnswers {
		if err := c.settle(&at, base); err != nil {
			return at, err
		}
		card, _ := at.View["card"].(map[string]any)
		if at.View["status"] != "awaiting_approval" || card == nil {
			return at, fmt.Errorf("tour: before %s: conversation %v, want a card", answer, at.View)
		}
		at.Step = answer
		r = c.Do("POST", base+"/answer", map[string]any{"turnDigest": card["turnDigest"], "answer": answer})
		if r.Status != http.StatusAccepted {
			return at.fail(r, "want 202")
		}
	}
	if err := c.settle(&at, base); err != nil {
		return at, err
	}
	if at.View["status"] != "idle" || at.View["error"] != nil {
		return at, fmt.Errorf("tour: after the last card: conversation status %v error %v, want idle", at.View["status"], at.View["error"])
	}
	at.Step = "end"
	if r = c.Do("POST", base+"/end-tour", nil); r.Status != http.StatusOK {
		return at.fail(r, "want 200")
	}
	return at, nil
}

// settle waits for the conversation's jobs and reads it into at.View.
func (c *Client) settle(at *TourStep, base string) error {
	c.env.App.Chat.Wait()
	r := c.Do("GET", base, nil)
	if r.Status != http.StatusOK {
		_, err := at.fail(r, "reading the conversation: want 200")
		return err
	}
	at.View = nil
	if err := json.Unmarshal(r.Body, &at.View); err != nil {
		_, err := at.fail(r, "unreadable conversation")
		return err
	}
	return nil
}

func (at *TourStep) fail(r Response, want string) (TourStep, error) {
	at.Status, at.Body = r.Status, r.Body
	return *at, fmt.Errorf("tour: %s = %d %s: %s", at.Step, r.Status, r.Body, want)
}
