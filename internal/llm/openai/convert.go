package openai

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"waymark/internal/llm"
	"waymark/internal/store"
)

// params maps a request to openai-go parameters. A request that cannot be
// sent is a KindNotRetryable error.
func (p *Provider) params(req llm.Request) (sdk.ChatCompletionNewParams, error) {
	invalid := func(format string, args ...any) (sdk.ChatCompletionNewParams, error) {
		return sdk.ChatCompletionNewParams{}, &llm.Error{Kind: llm.KindNotRetryable,
			Err: fmt.Errorf("invalid request: "+format, args...)}
	}
	model := cmp.Or(req.Model, p.cfg.Model)
	if model == "" {
		return invalid("no model (set Config.Model or Request.Model)")
	}
	if len(req.Messages) == 0 {
		return invalid("no messages")
	}
	params := sdk.ChatCompletionNewParams{Model: shared.ChatModel(model)}
	for i, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			params.Messages = append(params.Messages, sdk.SystemMessage(m.Content))
		case llm.RoleUser:
			params.Messages = append(params.Messages, sdk.UserMessage(m.Content))
		case llm.RoleTool:
			if m.ToolCallID == "" {
				return invalid("message %d: tool message without ToolCallID", i)
			}
			params.Messages = append(params.Messages, sdk.ToolMessage(m.Content, m.ToolCallID))
		case llm.RoleAssistant:
			a := sdk.ChatCompletionAssistantMessageParam{}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = sdk.String(m.Content)
			}
			for _, c := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
						ID: c.ID,
						Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name: c.Name, Arguments: cmp.Or(c.Arguments, "{}"),
						},
					},
				})
			}
			params.Messages = append(params.Messages, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			return invalid("message %d: unknown role %q", i, m.Role)
		}
	}
	for _, t := range req.Tools {
		if t.Name == "" {
			return invalid("tool without a name")
		}
		schema := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
		if len(bytes.TrimSpace(t.Parameters)) > 0 {
			// Only the schema's top level becomes a map (the SDK's type); its
			// values go out as they came, not rebuilt as nested maps for
			// every call and encoded again (a turn's CPU).
			var top map[string]json.RawMessage
			if err := json.Unmarshal(t.Parameters, &top); err != nil || top == nil {
				return invalid("tool %q: parameters are not a JSON Schema object", t.Name)
			}
			schema = make(shared.FunctionParameters, len(top))
			for k, v := range top {
				schema[k] = v
			}
		}
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			def.Description = sdk.String(t.Description)
		}
		params.Tools = append(params.Tools, sdk.ChatCompletionFunctionTool(def))
	}
	if req.MaxTokens > 0 {
		// max_tokens rather than max_completion_tokens: every
		// OpenAI-compatible server understands it.
		params.MaxTokens = sdk.Int(int64(req.MaxTokens))
	}
	return params, nil
}

// fromCompletion maps the first choice of a completion to a response,
// checking that it is usable.
func fromCompletion(c *sdk.ChatCompletion) (llm.Response, error) {
	bad := func(format string, args ...any) (llm.Response, error) {
		return llm.Response{}, &llm.Error{Kind: llm.KindBadResponse, Err: fmt.Errorf(format, args...)}
	}
	if c == nil || len(c.Choices) == 0 {
		return bad("response has no choices")
	}
	ch := c.Choices[0]
	// The answer is kept, not refused, so text no database stores alike is cleaned.
	msg := llm.Message{Role: llm.RoleAssistant, Content: store.Storable(ch.Message.Content)}
	for i, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			return bad("tool call %d has unsupported type %q", i, tc.Type)
		}
		if tc.Function.Name == "" {
			return bad("tool call %d has no name", i)
		}
		args, ok := objectArguments(tc.Function.Arguments)
		if !ok {
			return bad("tool call %d (%s): arguments are not a JSON object", i, tc.Function.Name)
		}
		msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{
			ID: cmp.Or(tc.ID, fmt.Sprintf("call_%d", i)), Name: tc.Function.Name, Arguments: args,
		})
	}
	return llm.Response{
		Message:      msg,
		FinishReason: finishReason(ch.FinishReason, len(msg.ToolCalls) > 0),
		Usage: llm.Usage{
			PromptTokens:     int(c.Usage.PromptTokens),
			CompletionTokens: int(c.Usage.CompletionTokens),
		},
	}, nil
}

// objectArguments checks that raw tool arguments are one JSON object; empty
// arguments, which some servers send for tools without parameters, become {}.
func objectArguments(raw string) (string, bool) {
	trimmed := bytes.TrimSpace([]byte(raw))
	if len(trimmed) == 0 {
		return "{}", true
	}
	var obj map[string]json.RawMessage
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &obj) != nil {
		return "", false
	}
	return raw, true
}

// finishReason normalises what servers send: a reply with tool calls
// finishes with tool_calls (some servers say stop), a missing reason is stop.
func finishReason(reason string, hasToolCalls bool) string {
	switch {
	case hasToolCalls && (reason == "" || reason == llm.FinishStop || reason == "function_call"):
		return llm.FinishToolCalls
	case reason == "":
		return llm.FinishStop
	}
	return reason
}
