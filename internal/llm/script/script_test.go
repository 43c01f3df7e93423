package script

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"waymark/internal/llm"
)

func userRequest(text string) llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

func TestCompleteAnswersRepliesInOrderThenExhausts(t *testing.T) {
	t.Parallel()
	p, err := New([]Reply{
		{Content: "Ich lese die Seite.", ToolCalls: []llm.ToolCall{{Name: "read_record", Arguments: `{"uid":7}`}, {Name: "list_pages"}}},
		{Content: "Fertig.", Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 2}},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	first, err := p.Complete(context.Background(), userRequest("eins"))
	if err != nil {
		t.Fatalf("Complete 1: %v", err)
	}
	wantCalls := []llm.ToolCall{
		{ID: "call_1_1", Name: "read_record", Arguments: `{"uid":7}`},
		{ID: "call_1_2", Name: "list_pages", Arguments: `{}`},
	}
	if !reflect.DeepEqual(first.Message.ToolCalls, wantCalls) || first.FinishReason != llm.FinishToolCalls || first.Message.Role != llm.RoleAssistant {
		t.Errorf("Complete 1 = %+v, want tool calls %+v and finish tool_calls", first, wantCalls)
	}
	second, err := p.Complete(context.Background(), userRequest("zwei"))
	want := llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "Fertig."}, FinishReason: llm.FinishStop, Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 2}}
	if err != nil || !reflect.DeepEqual(second, want) {
		t.Errorf("Complete 2 = %+v, %v; want %+v", second, err, want)
	}
	_, err = p.Complete(context.Background(), userRequest("drei"))
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.KindNotRetryable || !errors.Is(err, ErrExhausted) {
		t.Errorf("Complete 3 = %v, want not_retryable script exhausted", err)
	}
	reqs := p.Requests()
	if len(reqs) != 3 || reqs[0].Messages[0].Content != "eins" || reqs[2].Messages[0].Content != "drei" {
		t.Errorf("Requests = %+v, want the three requests in order", reqs)
	}
	if p.Remaining() != 0 {
		t.Errorf("Remaining = %d, want 0", p.Remaining())
	}
}

func TestCompleteSimulatesFailuresByKind(t *testing.T) {
	t.Parallel()
	p, err := New([]Reply{{Err: ErrRetryable}, {Err: ErrNotRetryable}, {Err: ErrBadResponse}, {Content: "ok"}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, want := range []llm.Kind{llm.KindRetryable, llm.KindNotRetryable, llm.KindBadResponse} {
		_, err := p.Complete(context.Background(), userRequest("x"))
		var le *llm.Error
		if !errors.As(err, &le) || le.Kind != want {
			t.Errorf("Complete = %v, want kind %v", err, want)
		}
		if got := llm.IsRetryable(err); got != (want == llm.KindRetryable) {
			t.Errorf("IsRetryable(%v) = %v", err, got)
		}
	}
	if resp, err := p.Complete(context.Background(), userRequest("x")); err != nil || resp.Message.Content != "ok" {
		t.Errorf("Complete after failures = %+v, %v; want ok", resp, err)
	}
}

func TestCompleteStreamsDeltasWhenAsked(t *testing.T) {
	t.Parallel()
	p, err := New([]Reply{{Content: "Hallo", ToolCalls: []llm.ToolCall{{Name: "read_record"}}}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	var got []llm.Delta
	req := userRequest("x")
	req.OnDelta = func(d llm.Delta) { got = append(got, d) }
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := []llm.Delta{{Content: "Hallo"}, {ToolCallName: "read_record"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("deltas = %+v, want %+v", got, want)
	}
}

func TestCompleteWithCancelledContextKeepsTheReply(t *testing.T) {
	t.Parallel()
	p, _ := New([]Reply{{Content: "ok"}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Complete(ctx, userRequest("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Complete = %v, want context.Canceled", err)
	}
	if p.Remaining() != 1 {
		t.Errorf("Remaining = %d, want 1", p.Remaining())
	}
}

func TestNewRejectsBadReplies(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reply Reply
		want  string
	}{
		"unknown err":         {Reply{Err: "explode"}, `err "explode"`},
		"tool without name":   {Reply{ToolCalls: []llm.ToolCall{{Arguments: "{}"}}}, "no name"},
		"arguments no object": {Reply{ToolCalls: []llm.ToolCall{{Name: "t", Arguments: "[1]"}}}, "not a JSON object"},
	}
	for name, c := range cases {
		p, err := New([]Reply{{Content: "ok"}, c.reply})
		if err == nil || p != nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "reply 2") {
			t.Errorf("New(%s) = %v, want an error naming reply 2 and %q", name, err, c.want)
		}
	}
}

func TestRepliesLoadFromYAMLAndJSONFixtures(t *testing.T) {
	t.Parallel()
	const doc = `
- content: Ich schaue nach.
  toolCalls:
    - id: c1
      name: read_record
      arguments: '{"uid": 7}'
  usage: {promptTokens: 5, completionTokens: 3}
- err: retryable
- content: Fertig.
  finishReason: length
`
	var fromYAML []Reply
	if err := yaml.Unmarshal([]byte(doc), &fromYAML); err != nil {
		t.Fatalf("yaml: %v", err)
	}
	want := []Reply{
		{Content: "Ich schaue nach.", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_record", Arguments: `{"uid": 7}`}}, Usage: llm.Usage{PromptTokens: 5, CompletionTokens: 3}},
		{Err: ErrRetryable},
		{Content: "Fertig.", FinishReason: llm.FinishLength},
	}
	if !reflect.DeepEqual(fromYAML, want) {
		t.Errorf("yaml replies = %+v, want %+v", fromYAML, want)
	}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"toolCalls"`) || !strings.Contains(string(b), `"promptTokens"`) || !strings.Contains(string(b), `"finishReason"`) {
		t.Errorf("json = %s, want camelCase keys", b)
	}
	var fromJSON []Reply
	if err := json.Unmarshal(b, &fromJSON); err != nil || !reflect.DeepEqual(fromJSON, want) {
		t.Errorf("json round trip = %+v, %v; want %+v", fromJSON, err, want)
	}
}

func TestCompleteIsSafeForConcurrentCallers(t *testing.T) {
	t.Parallel()
	replies := make([]Reply, 50)
	for i := range replies {
		replies[i] = Reply{Content: "r"}
	}
	p, _ := New(replies)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failures := 0
	for range 60 {
		wg.Go(func() {
			if _, err := p.Complete(context.Background(), userRequest("x")); err != nil {
				mu.Lock()
				failures++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if failures != 10 || p.Remaining() != 0 || len(p.Requests()) != 60 {
		t.Errorf("failures = %d, remaining = %d, requests = %d; want 10, 0, 60", failures, p.Remaining(), len(p.Requests()))
	}
}

func TestFuncComputesReplyFromRequest(t *testing.T) {
	t.Parallel()
	var p llm.Provider = Func(func(_ context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "echo: " + req.Messages[0].Content}, FinishReason: llm.FinishStop}, nil
	})
	resp, err := p.Complete(context.Background(), userRequest("hallo"))
	if err != nil || resp.Message.Content != "echo: hallo" {
		t.Errorf("Complete = %+v, %v; want echo: hallo", resp, err)
	}
}
