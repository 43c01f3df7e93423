package hostile_test

import (
	"context"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	wt "waymark/internal/waymarktest"
)

func toolCall(id, name, args string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: args}}}
}

func answer(s string) llmtest.Reply { return llmtest.Reply{Content: s} }

// count returns SELECT COUNT(*) FROM table.
func count(t *testing.T, e *wt.Env, table string) int {
	t.Helper()
	var n int
	if err := e.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// fields returns the stored fields JSON of a record.
func fields(t *testing.T, e *wt.Env, table string, uid int) string {
	t.Helper()
	var f string
	if err := e.DB.QueryRow(context.Background(), "SELECT fields FROM records WHERE tbl = ? AND uid = ?", table, uid).Scan(&f); err != nil {
		t.Fatal(err)
	}
	return f
}
