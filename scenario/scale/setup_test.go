// Package scale_test proves issue 15 (operate at scale) through the HTTP
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

func path(id float64, tail string) string {
	return "/api/conversations/" + strconv.FormatInt(int64(id), 10) + tail
}

// start opens a conversation about page 1 in English with the seo process.
func start(t *testing.T, c *wt.Client) float64 {
	t.Helper()
	return c.Must("POST", "/api/conversations", map[string]any{"page": 1, "language": 0, "skill": seo}, http.StatusCreated).Map(t)["id"].(float64)
}

// settled waits until no chat job of e's database is left and returns the conversation.
func settled(t *testing.T, e *wt.Env, c *wt.Client, id float64) map[string]any {
	t.Helper()
	e.App.Chat.Wait()
	return c.Must("GET", path(id, ""), nil, 200).Map(t)
}

func send(t *testing.T, e *wt.Env, c *wt.Client, id float64, text string) map[string]any {
	t.Helper()
	c.Must("POST", path(id, "/messages"), map[string]any{"content": text}, http.StatusAccepted)
	return settled(t, e, c, id)
}

func decide(t *testing.T, e *wt.Env, c *wt.Client, conv map[string]any, ans string) map[string]any {
	t.Helper()
	card, ok := conv["card"].(map[string]any)
	if !ok {
		t.Fatalf("no card to answer: %v", conv)
	}
	c.Must("POST", path(conv["id"].(float64), "/answer"), map[string]any{"turnDigest": card["turnDigest"], "answer": ans}, http.StatusAccepted)
	return settled(t, e, c, conv["id"].(float64))
}

// untilSettled reads the conversation until it is no longer processing (at
// most 20 s) and returns it.
func untilSettled(t *testing.T, c *wt.Client, id float64) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		conv := c.Must("GET", path(id, ""), nil, 200).Map(t)
		if conv["status"] != "processing" {
			return conv
		}
		if time.Now().After(deadline) {
			t.Fatalf("conversation %v still processing after 20s", id)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not a synchronisation
	}
}
