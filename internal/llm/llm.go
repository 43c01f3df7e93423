package llm

import (
	"context"
	"encoding/json"
)

// Roles of a Message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Finish reasons of a Response.
const (
	FinishStop          = "stop"           // the model ended its reply
	FinishToolCalls     = "tool_calls"     // the model asks for tool calls
	FinishLength        = "length"         // the reply hit MaxTokens or the window
	FinishContentFilter = "content_filter" // the reply was withheld by a filter
)

// Provider is a language model. Complete sends the conversation and returns
// the assistant's reply. Errors are *Error values classified by Kind, except a
// cancelled or expired ctx, which is returned as ctx.Err().
type Provider interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// Message is one entry of a conversation. Assistant messages may carry
// ToolCalls; a tool message answers the call named by ToolCallID.
type Message struct {
	Role       string     `json:"role" yaml:"role"`
	Content    string     `json:"content,omitempty" yaml:"content,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty" yaml:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty" yaml:"toolCallId,omitempty"`
}

// ToolCall is the model's request to run one tool. Arguments is the raw JSON
// object the model produced; providers guarantee it is a JSON object.
type ToolCall struct {
	ID        string `json:"id" yaml:"id"`
	Name      string `json:"name" yaml:"name"`
	Arguments string `json:"arguments" yaml:"arguments"`
}

// ToolSpec describes a tool offered to the model. Parameters is a JSON Schema
// of the arguments object; empty means a tool without arguments.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// Request is one completion call. Model overrides the provider's configured
// model when set; MaxTokens limits the reply when positive. When OnDelta is
// set the provider streams and calls it, on the calling goroutine, for every
// piece of the reply as it arrives.
type Request struct {
	Model     string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int
	OnDelta   func(Delta)
}

// Delta is one streamed piece of a reply: some Content, or the name of a tool
// call the model has started. Restart tells that a dropped attempt is being
// retried and every earlier delta of this Complete call is void.
type Delta struct {
	Content      string
	ToolCallName string
	Restart      bool
}

// Response is the assistant's reply to a Request.
type Response struct {
	Message      Message // Role is RoleAssistant
	FinishReason string  // one of the Finish… constants, or what the server sent
	Usage        Usage
}

// Usage counts the tokens of one call.
type Usage struct {
	PromptTokens     int `json:"promptTokens" yaml:"promptTokens"`
	CompletionTokens int `json:"completionTokens" yaml:"completionTokens"`
}
