package scale_test

import (
	"testing"
	"time"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// BenchmarkConversationPollDuringATurn: what one GET of a conversation costs
// while its turn waits on the model — what a client (and `waymark bench`)
// does between sending an answer and reading the next card. It reports the
// store statements and the time of one read beside one raw commit.
func BenchmarkConversationPollDuringATurn(b *testing.B) {
	db := storetest.Open(b, store.SQLite)
	e := wt.New(b, db, site, &wt.Options{Workers: 1, ChatWorkers: 1})
	hold := make(chan struct{})
	defer close(hold)
	e.LLM.Add(llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "p", Name: "set_progress", Arguments: `{"current": 1, "total": 3}`}}},
		llmtest.Reply{Content: "…", Hold: hold})
	erika := e.As(wt.Erika)
	id := wt.Decode[wt.Conversation](b, erika.Must("POST", "/api/conversations", wt.StartConversation{Page: 1, Skill: seo}, 201)).ID
	erika.Must("POST", path(id, "/messages"), map[string]any{"content": "Los"}, 202)
	deadline := time.Now().Add(20 * time.Second)
	for len(e.LLM.Requests()) < 2 || wt.NullOrAbsent(read(b, erika, id).Progress) {
		if time.Now().After(deadline) {
			b.Fatal("the turn did not reach the held model call")
		}
		time.Sleep(5 * time.Millisecond) // polling a condition
	}
	t0 := time.Now()
	for range 1000 {
		var one int
		if err := db.QueryRow(b.Context(), "SELECT 1").Scan(&one); err != nil {
			b.Fatal(err)
		}
	}
	statement := time.Since(t0) / 1000
	stmts := db.Statements()
	b.ResetTimer()
	for b.Loop() {
		if c := read(b, erika, id); c.Status != "processing" {
			b.Fatalf("status %v, want processing", c.Status)
		}
	}
	b.ReportMetric(float64(db.Statements()-stmts)/float64(b.N), "statements/poll")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/poll")
	b.ReportMetric(float64(statement.Nanoseconds())/1e6, "ms/baseline_statement")
}
