package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"waymark/internal/llm"
)

// Simulated failures a Reply may name in Err.
const (
	ErrRetryable    = "retryable"
	ErrNotRetryable = "not_retryable"
	ErrBadResponse  = "bad_response"
)

// ErrExhausted is wrapped by the KindNotRetryable *llm.Error that Complete
// returns once every reply has been used.
var ErrExhausted = errors.New("script exhausted")

// Reply is one canned answer. FinishReason defaults to "tool_calls" when
// there are tool calls, else "stop"; a tool call without ID gets
// "call_<reply>_<n>" and empty Arguments become {}. Err, when set, makes
// Complete fail with that kind instead of answering.
type Reply struct {
	Content      string         `json:"content,omitempty" yaml:"content,omitempty"`
	ToolCalls    []llm.ToolCall `json:"toolCalls,omitempty" yaml:"toolCalls,omitempty"`
	FinishReason string         `json:"finishReason,omitempty" yaml:"finishReason,omitempty"`
	Usage        llm.Usage      `json:"usage,omitzero" yaml:"usage,omitempty"`
	Err          string         `json:"err,omitempty" yaml:"err,omitempty"`
}

// Provider answers with its replies in order. It is safe for concurrent use.
type Provider struct {
	mu       sync.Mutex // guards replies, next and requests
	replies  []Reply
	next     int
	requests []llm.Request
}

var _ llm.Provider = (*Provider)(nil)

// New returns a provider answering with replies. It refuses a reply with an
// unknown Err, a tool call without a name, or tool arguments that are not a
// JSON object, naming the reply.
func New(replies []Reply) (*Provider, error) {
	out := make([]Reply, len(replies))
	for i, r := range replies {
		switch r.Err {
		case "", ErrRetryable, ErrNotRetryable, ErrBadResponse:
		default:
			return nil, fmt.Errorf("script: reply %d: err %q is not one of %s, %s, %s", i+1, r.Err, ErrRetryable, ErrNotRetryable, ErrBadResponse)
		}
		r.ToolCalls = append([]llm.ToolCall(nil), r.ToolCalls...)
		for j, c := range r.ToolCalls {
			if c.Name == "" {
				return nil, fmt.Errorf("script: reply %d: tool call %d has no name", i+1, j+1)
			}
			if c.ID == "" {
				r.ToolCalls[j].ID = fmt.Sprintf("call_%d_%d", i+1, j+1)
			}
			if c.Arguments == "" {
				r.ToolCalls[j].Arguments = "{}"
			} else if !isObject(c.Arguments) {
				return nil, fmt.Errorf("script: reply %d: tool call %s: arguments are not a JSON object", i+1, c.Name)
			}
		}
		if r.FinishReason == "" {
			r.FinishReason = llm.FinishStop
			if len(r.ToolCalls) > 0 {
				r.FinishReason = llm.FinishToolCalls
			}
		}
		out[i] = r
	}
	return &Provider{replies: out}, nil
}

func isObject(s string) bool {
	var obj map[string]json.RawMessage
	return json.Unmarshal([]byte(s), &obj) == nil && obj != nil
}

// Complete records req and returns the next reply; when streaming it first
// passes the content and each tool-call name to req.OnDelta. After the last
// reply it fails with ErrExhausted (not retryable). A cancelled ctx returns
// ctx.Err() without using a reply.
func (p *Provider) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	p.mu.Lock()
	p.requests = append(p.requests, req)
	n := p.next
	if n >= len(p.replies) {
		p.mu.Unlock()
		return llm.Response{}, &llm.Error{Kind: llm.KindNotRetryable, Attempts: 1,
			Err: fmt.Errorf("request %d: %w", n+1, ErrExhausted)}
	}
	r := p.replies[n]
	p.next++
	p.mu.Unlock()

	if r.Err != "" {
		kind := map[string]llm.Kind{ErrRetryable: llm.KindRetryable, ErrNotRetryable: llm.KindNotRetryable, ErrBadResponse: llm.KindBadResponse}[r.Err]
		return llm.Response{}, &llm.Error{Kind: kind, Attempts: 1, Err: fmt.Errorf("script: reply %d: simulated %s failure", n+1, r.Err)}
	}
	if req.OnDelta != nil {
		if r.Content != "" {
			req.OnDelta(llm.Delta{Content: r.Content})
		}
		for _, c := range r.ToolCalls {
			req.OnDelta(llm.Delta{ToolCallName: c.Name})
		}
	}
	return llm.Response{
		Message: llm.Message{Role: llm.RoleAssistant, Content: r.Content,
			ToolCalls: append([]llm.ToolCall(nil), r.ToolCalls...)},
		FinishReason: r.FinishReason,
		Usage:        r.Usage,
	}, nil
}

// Requests returns the requests received so far, in order.
func (p *Provider) Requests() []llm.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]llm.Request(nil), p.requests...)
}

// Remaining returns how many replies have not been used.
func (p *Provider) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.replies) - p.next
}

// Func is an llm.Provider computing each reply with a function.
type Func func(ctx context.Context, req llm.Request) (llm.Response, error)

var _ llm.Provider = Func(nil)

// Complete calls f.
func (f Func) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	return f(ctx, req)
}
