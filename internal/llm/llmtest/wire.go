package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"

	"waymark/internal/llm"
)

// wireRequest is the part of an OpenAI chat-completions request the server reads.
type wireRequest struct {
	Model               string        `json:"model"`
	Messages            []wireMessage `json:"messages"`
	Tools               []wireTool    `json:"tools"`
	MaxTokens           int           `json:"max_tokens"`
	MaxCompletionTokens int           `json:"max_completion_tokens"`
	Stream              bool          `json:"stream"`
	StreamOptions       struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"`
	ToolCalls  []wireToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

type wireToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (r wireRequest) decode() (RecordedRequest, error) {
	rec := RecordedRequest{Model: r.Model, Stream: r.Stream, MaxTokens: r.MaxTokens}
	if rec.MaxTokens == 0 {
		rec.MaxTokens = r.MaxCompletionTokens
	}
	for i, m := range r.Messages {
		content, err := decodeContent(m.Content)
		if err != nil {
			return RecordedRequest{}, fmt.Errorf("message %d: %w", i, err)
		}
		msg := llm.Message{Role: m.Role, Content: content, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		rec.Messages = append(rec.Messages, msg)
	}
	for _, t := range r.Tools {
		rec.Tools = append(rec.Tools, llm.ToolSpec{
			Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters,
		})
	}
	return rec, nil
}

// decodeContent reads a message content: a string, null, or an array of
// text parts (joined).
func decodeContent(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor a list of parts: %w", err)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

func wireCalls(calls []llm.ToolCall) []wireToolCall {
	var out []wireToolCall
	for i, c := range calls {
		w := wireToolCall{ID: cmpOr(c.ID, fmt.Sprintf("call_%d", i+1)), Type: "function"}
		w.Function.Name = c.Name
		w.Function.Arguments = c.Arguments
		out = append(out, w)
	}
	return out
}

func usage(u llm.Usage) wireUsage {
	return wireUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
}

// completion is the non-streaming answer.
func completion(id, model string, r Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": r.Content}
	if len(r.ToolCalls) > 0 {
		msg["tool_calls"] = wireCalls(r.ToolCalls)
		if r.Content == "" {
			msg["content"] = nil
		}
	}
	return map[string]any{
		"id": id, "object": "chat.completion", "created": 0, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finishReason(r)}},
		"usage":   usage(r.Usage),
	}
}
