package openai

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
)

func TestCompleteReturnsTextReplyWithUsage(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, llmtest.Reply{Content: "Hallo Welt", Usage: llm.Usage{PromptTokens: 12, CompletionTokens: 3}})
	resp, err := b.p.Complete(context.Background(), userRequest("Hi"))
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := llm.Response{
		Message:      llm.Message{Role: llm.RoleAssistant, Content: "Hallo Welt"},
		FinishReason: llm.FinishStop,
		Usage:        llm.Usage{PromptTokens: 12, CompletionTokens: 3},
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("Complete = %+v, want %+v", resp, want)
	}
	if reqs := b.srv.Requests(); len(reqs) != 1 || reqs[0].Stream {
		t.Errorf("requests = %+v, want one non-streaming request", reqs)
	}
}

func TestCompleteStreamsTextAsDeltas(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, llmtest.Reply{Content: "Die Seite braucht einen Titel.", Usage: llm.Usage{PromptTokens: 7, CompletionTokens: 6}})
	onDelta, deltas := collect()
	req := userRequest("Hi")
	req.OnDelta = onDelta
	resp, err := b.p.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	var joined strings.Builder
	for _, d := range deltas() {
		joined.WriteString(d.Content)
	}
	if len(deltas()) < 2 || joined.String() != "Die Seite braucht einen Titel." {
		t.Errorf("deltas = %+v, want several pieces joining to the reply", deltas())
	}
	if resp.Message.Content != "Die Seite braucht einen Titel." || resp.FinishReason != llm.FinishStop {
		t.Errorf("Complete = %+v, want the whole text and finish stop", resp)
	}
	if resp.Usage != (llm.Usage{PromptTokens: 7, CompletionTokens: 6}) {
		t.Errorf("usage = %+v, want 7/6", resp.Usage)
	}
	if reqs := b.srv.Requests(); len(reqs) != 1 || !reqs[0].Stream {
		t.Errorf("requests = %+v, want one streaming request", reqs)
	}
}

func TestCompleteReturnsToolCalls(t *testing.T) {
	t.Parallel()
	calls := []llm.ToolCall{
		{ID: "call_a", Name: "read_record", Arguments: `{"table":"tt_content","uid":42,"fields":["header","bodytext"]}`},
		{ID: "call_b", Name: "list_pages", Arguments: `{}`},
		{ID: "call_c", Name: "ping", Arguments: ``},
	}
	wantCalls := append([]llm.ToolCall(nil), calls...)
	wantCalls[2].Arguments = "{}"
	for _, streaming := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "streaming"}[streaming], func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil, llmtest.Reply{Content: "Ich lese nach.", ToolCalls: calls, Usage: llm.Usage{PromptTokens: 30, CompletionTokens: 20}})
			req := userRequest("Prüfe die Seite")
			onDelta, deltas := collect()
			if streaming {
				req.OnDelta = onDelta
			}
			resp, err := b.p.Complete(context.Background(), req)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if !reflect.DeepEqual(resp.Message.ToolCalls, wantCalls) {
				t.Errorf("tool calls = %+v, want %+v", resp.Message.ToolCalls, wantCalls)
			}
			if resp.FinishReason != llm.FinishToolCalls || resp.Message.Content != "Ich lese nach." {
				t.Errorf("Complete = %+v, want content and finish tool_calls", resp)
			}
			if resp.Usage != (llm.Usage{PromptTokens: 30, CompletionTokens: 20}) {
				t.Errorf("usage = %+v, want 30/20", resp.Usage)
			}
			if streaming {
				var names []string
				for _, d := range deltas() {
					if d.ToolCallName != "" {
						names = append(names, d.ToolCallName)
					}
				}
				if want := []string{"read_record", "list_pages", "ping"}; !reflect.DeepEqual(names, want) {
					t.Errorf("tool call deltas = %v, want %v", names, want)
				}
			}
		})
	}
}

func TestCompleteSendsModelMessagesToolsAndKey(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, llmtest.Reply{Content: "ok"}, llmtest.Reply{Content: "ok"})
	schema := json.RawMessage(`{"type":"object","properties":{"uid":{"type":"integer"}},"required":["uid"]}`)
	messages := []llm.Message{
		{Role: llm.RoleSystem, Content: "Du bist ein Redakteur."},
		{Role: llm.RoleUser, Content: "Prüfe Seite 7"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read_record", Arguments: `{"uid":7}`}}},
		{Role: llm.RoleTool, ToolCallID: "call_1", Content: `{"header":"Über uns"}`},
		{Role: llm.RoleAssistant, Content: "Gelesen."},
	}
	req := llm.Request{Messages: messages, MaxTokens: 256, Tools: []llm.ToolSpec{
		{Name: "read_record", Description: "Reads one record", Parameters: schema},
		{Name: "list_pages"},
	}}
	if _, err := b.p.Complete(context.Background(), req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	req.Model = "other-model"
	if _, err := b.p.Complete(context.Background(), req); err != nil {
		t.Fatalf("Complete with model: %v", err)
	}
	reqs := b.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d, want 2", len(reqs))
	}
	got := reqs[0]
	if got.Model != "test-model" || reqs[1].Model != "other-model" {
		t.Errorf("models = %q, %q, want test-model (config), other-model (request)", got.Model, reqs[1].Model)
	}
	if got.Authorization != "Bearer "+testKey {
		t.Errorf("Authorization = %q, want the bearer key", got.Authorization)
	}
	if got.MaxTokens != 256 {
		t.Errorf("max tokens = %d, want 256", got.MaxTokens)
	}
	if !reflect.DeepEqual(got.Messages, messages) {
		t.Errorf("messages =\n%+v\nwant\n%+v", got.Messages, messages)
	}
	if len(got.Tools) != 2 || got.Tools[0].Name != "read_record" || got.Tools[0].Description != "Reads one record" || got.Tools[1].Name != "list_pages" {
		t.Fatalf("tools = %+v, want read_record and list_pages", got.Tools)
	}
	var sent, want any
	_ = json.Unmarshal(got.Tools[0].Parameters, &sent)
	_ = json.Unmarshal(schema, &want)
	if !reflect.DeepEqual(sent, want) {
		t.Errorf("tool parameters = %s, want %s", got.Tools[0].Parameters, schema)
	}
	var empty map[string]any
	if err := json.Unmarshal(got.Tools[1].Parameters, &empty); err != nil || empty["type"] != "object" {
		t.Errorf("parameters of a tool without them = %s, want an empty object schema", got.Tools[1].Parameters)
	}
}

func TestCompleteRejectsInvalidRequestWithoutSending(t *testing.T) {
	t.Parallel()
	cases := map[string]llm.Request{
		"unknown role":      {Messages: []llm.Message{{Role: "wizard", Content: "x"}}},
		"no messages":       {},
		"tool without id":   {Messages: []llm.Message{{Role: llm.RoleTool, Content: "x"}}},
		"bad tool schema":   {Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, Tools: []llm.ToolSpec{{Name: "t", Parameters: json.RawMessage(`[1]`)}}},
		"tool without name": {Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, Tools: []llm.ToolSpec{{}}},
	}
	for name, req := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil)
			_, err := b.p.Complete(context.Background(), req)
			if le := kindOf(t, err); le.Kind != llm.KindNotRetryable {
				t.Errorf("Complete(%s) kind = %v, want not_retryable", name, le.Kind)
			}
			if n := len(b.srv.Requests()); n != 0 {
				t.Errorf("server got %d requests, want 0", n)
			}
		})
	}
	b := setup(t, func(c *Config) { c.Model = "" })
	_, err := b.p.Complete(context.Background(), userRequest("x"))
	if le := kindOf(t, err); le.Kind != llm.KindNotRetryable || !strings.Contains(err.Error(), "model") {
		t.Errorf("Complete without model = %v, want not_retryable naming the model", err)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "BaseURL is required"},
		{Config{BaseURL: "localhost:8080"}, "BaseURL must be"},
		{Config{BaseURL: "http://x/v1", Timeout: -1}, "Timeout"},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want error containing %q", c.cfg, err, c.want)
		}
	}
}

func TestCompleteWithoutKeySendsNoAuthorization(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-environment")
	b := setup(t, func(c *Config) { c.APIKey = "" }, llmtest.Reply{Content: "ok"})
	if _, err := b.p.Complete(context.Background(), userRequest("Hi")); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if got := b.srv.Requests()[0].Authorization; got != "" {
		t.Errorf("Authorization = %q, want none", got)
	}
}
