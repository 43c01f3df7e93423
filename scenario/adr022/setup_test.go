// Package adr022_test proves ADR-022 (shared/spec/004_4a5b470ad6989043.txt):
// open points of guided processes, through the chat API — tests named after
// the statements of spec/CHECKLIST.md (P.*).
package adr022_test

import (
	"net/http"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	wt "waymark/internal/waymarktest"
)

// site is wt.Site with an approved process skill "seo" (uid 12) and a plain
// skill "tone" (uid 13), both attached to the chat configuration.
const site = wt.Site + `
skillSources:
  - {uid: 2, type: backend, title: Site, trustLevel: first_party}
skills:
  - uid: 12
    source: 2
    identifier: seo
    enabled: true
    markdown: "---\nname: SEO optimieren\ndescription: Die Seite verbessern.\nprocess: true\nallowed-tools: [read_page, update_page_metadata, update_content, set_progress]\n---\nEine Änderung pro Schritt."
  - uid: 13
    source: 2
    identifier: tone
    enabled: true
    markdown: "---\nname: Tone\ndescription: Brand tone.\n---\nWrite warmly."
approvals:
  - {skill: 12, digest: current, approvedBy: 1}
  - {skill: 13, digest: current, approvedBy: 1}
attachments:
  - {configuration: 1, skill: 12, loadMode: always}
  - {configuration: 1, skill: 13, loadMode: always}
`

const (
	seo  = 12
	tone = 13
)

func newEnv(t *testing.T, db *store.DB) *wt.Env {
	t.Helper()
	return wt.New(t, db, site, nil)
}

func write(id, fields string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: "update_page_metadata", Arguments: `{"page": 1, "fields": ` + fields + `}`}}}
}

func answer(s string) llmtest.Reply { return llmtest.Reply{Content: s} }

// opened opens a conversation about page 1 in English with skill.
func opened(t *testing.T, c *wt.Client, skill int64) wt.Conversation {
	t.Helper()
	conv, r := c.StartConversation(wt.StartConversation{Page: 1, Skill: skill})
	if r.Status != http.StatusCreated {
		t.Fatalf("POST /api/conversations = %d, want 201: %s", r.Status, r.Body)
	}
	return conv
}

// current waits until the conversation is no longer processing and returns it.
func current(t *testing.T, e *wt.Env, c *wt.Client, id int64) wt.Conversation {
	t.Helper()
	e.App.Chat.Wait()
	conv, r := c.Conversation(id)
	if r.Status != http.StatusOK {
		t.Fatalf("GET conversation %d = %d: %s", id, r.Status, r.Body)
	}
	return conv
}

// said posts a message and waits for the turn.
func said(t *testing.T, e *wt.Env, c *wt.Client, id int64, text string) wt.Conversation {
	t.Helper()
	if r := c.SendMessage(id, text); r.Status != http.StatusAccepted {
		t.Fatalf("POST message = %d, want 202: %s", r.Status, r.Body)
	}
	return current(t, e, c, id)
}

// decided answers the waiting card and waits for the continuation.
func decided(t *testing.T, e *wt.Env, c *wt.Client, conv wt.Conversation, answer string) wt.Conversation {
	t.Helper()
	if conv.Card == nil {
		t.Fatalf("conversation %d has no card to answer: %+v", conv.ID, conv)
	}
	if r := c.AnswerConversation(conv.ID, wt.Answer{TurnDigest: conv.Card.TurnDigest, Answer: answer}); r.Status != http.StatusAccepted {
		t.Fatalf("POST answer %s = %d, want 202: %s", answer, r.Status, r.Body)
	}
	return current(t, e, c, conv.ID)
}

func itoa(f float64) string {
	n := int64(f)
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
