// Package scale_test proves (operate at scale) through the HTTP
// API: every turn on the queue, fast and safe crash recovery — on SQLite and
// PostgreSQL, with one application as the API and another as the worker
// where the test says so.
package scale_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	wt "waymark/internal/waymarktest"
)

// site is wt.TourSite: wt.Site with an approved process skill "seo"
// attached to the chat configuration.
const site = wt.TourSite

const seo = wt.TourSkill

func write(id, fields string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: "update_page_metadata", Arguments: `{"page": 1, "fields": ` + fields + `}`}}}
}

func completion() llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "p", Name: "set_progress", Arguments: `{"current": 1, "total": 1, "completed": true}`}}}
}

func answer(s string) llmtest.Reply { return llmtest.Reply{Content: s} }

func path(id int64, tail string) string {
	return "/api/conversations/" + strconv.FormatInt(id, 10) + tail
}

// start opens a conversation about page 1 in English with the seo process.
func start(t *testing.T, c *wt.Client) int64 {
	t.Helper()
	conv, r := c.StartConversation(wt.StartConversation{Page: 1, Skill: seo})
	if r.Status != http.StatusCreated {
		t.Fatalf("POST /api/conversations = %d, want 201: %s", r.Status, r.Body)
	}
	return conv.ID
}

// read is GET /api/conversations/{id}, answered 200.
func read(t testing.TB, c *wt.Client, id int64) wt.Conversation {
	t.Helper()
	return wt.Decode[wt.Conversation](t, c.Must("GET", path(id, ""), nil, 200))
}

// settled waits until no chat job of e's database is left and returns the conversation.
func settled(t *testing.T, e *wt.Env, c *wt.Client, id int64) wt.Conversation {
	t.Helper()
	e.App.Chat.Wait()
	return read(t, c, id)
}

func send(t *testing.T, e *wt.Env, c *wt.Client, id int64, text string) wt.Conversation {
	t.Helper()
	if r := c.SendMessage(id, text); r.Status != http.StatusAccepted {
		t.Fatalf("POST message = %d, want 202: %s", r.Status, r.Body)
	}
	return settled(t, e, c, id)
}

func decide(t *testing.T, e *wt.Env, c *wt.Client, conv wt.Conversation, ans string) wt.Conversation {
	t.Helper()
	if conv.Card == nil {
		t.Fatalf("no card to answer: %+v", conv)
	}
	if r := c.AnswerConversation(conv.ID, wt.Answer{TurnDigest: conv.Card.TurnDigest, Answer: ans}); r.Status != http.StatusAccepted {
		t.Fatalf("POST answer %s = %d, want 202: %s", ans, r.Status, r.Body)
	}
	return settled(t, e, c, conv.ID)
}

// untilSettled reads the conversation until it is no longer processing (at
// most 20 s) and returns it.
func untilSettled(t *testing.T, c *wt.Client, id int64) wt.Conversation {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		conv := read(t, c, id)
		if conv.Status != "processing" {
			return conv
		}
		if time.Now().After(deadline) {
			t.Fatalf("conversation %v still processing after 20s", id)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not a synchronisation
	}
}
