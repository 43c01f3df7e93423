package openai

import (
	"context"
	"errors"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"waymark/internal/llm"
	"waymark/internal/store"
)

// errIncomplete reports a stream that ended before the reply was finished.
var errIncomplete = errors.New("stream ended before the reply was finished")

// errMisfit reports a chunk that cannot belong to the reply so far.
var errMisfit = errors.New("stream chunk does not fit the reply so far")

// Bounds of one streamed reply: a server that sends more is answering
// something else (the reply is refused as a bad response, not kept growing).
const (
	maxReplyBytes     = 8 << 20 // content, tool names and arguments together
	maxReplyToolCalls = 128
)

// stream makes one streaming call, passing content and tool-call names to
// onDelta as they arrive and accumulating the reply.
func (p *Provider) stream(ctx context.Context, params sdk.ChatCompletionNewParams, onDelta func(llm.Delta), opts ...option.RequestOption) (llm.Response, error) {
	params.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
	s := p.client.Chat.Completions.NewStreaming(ctx, params, opts...)
	defer s.Close()
	var r reply
	for s.Next() {
		chunk := s.Current()
		if err := r.add(&chunk, onDelta); err != nil {
			return llm.Response{}, &llm.Error{Kind: llm.KindBadResponse, Err: err}
		}
	}
	if err := s.Err(); err != nil {
		return llm.Response{}, err
	}
	if r.finish == "" {
		return llm.Response{}, &llm.Error{Kind: llm.KindRetryable, Err: errIncomplete}
	}
	return fromCompletion(r.completion())
}

// reply accumulates the first choice of a streamed completion: its content,
// its tool calls by index (an ID, type and name once, the arguments in
// pieces), its finish reason, and the usage the chunks report. The SDK's
// accumulator keeps far more (every choice, log probabilities, events) and
// allocated a third of a bench run's memory.
type reply struct {
	id      string
	content []byte
	calls   []sdk.ChatCompletionMessageToolCallUnion
	args    [][]byte // the arguments of calls, by index
	finish  string
	usage   sdk.CompletionUsage
	size    int
}

func (r *reply) add(c *sdk.ChatCompletionChunk, onDelta func(llm.Delta)) error {
	if r.id != "" && c.ID != r.id {
		return errMisfit
	}
	r.id = c.ID
	r.usage.PromptTokens += c.Usage.PromptTokens
	r.usage.CompletionTokens += c.Usage.CompletionTokens
	r.usage.TotalTokens += c.Usage.TotalTokens
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue
		}
		if ch.FinishReason != "" {
			r.finish = ch.FinishReason
		}
		d := &ch.Delta
		r.size += len(d.Content)
		if d.Content != "" {
			r.content = append(r.content, d.Content...)
			onDelta(llm.Delta{Content: store.Storable(d.Content)})
		}
		for j := range d.ToolCalls {
			tc := &d.ToolCalls[j]
			if tc.Index < 0 || tc.Index >= maxReplyToolCalls {
				return errMisfit
			}
			for int64(len(r.calls)) <= tc.Index {
				r.calls = append(r.calls, sdk.ChatCompletionMessageToolCallUnion{})
				r.args = append(r.args, nil)
			}
			call := &r.calls[tc.Index]
			if tc.ID != "" {
				call.ID = tc.ID
			}
			if tc.Type != "" {
				call.Type = tc.Type
			}
			if tc.Function.Name != "" {
				if call.Function.Name == "" {
					onDelta(llm.Delta{ToolCallName: tc.Function.Name})
				}
				call.Function.Name += tc.Function.Name
			}
			r.args[tc.Index] = append(r.args[tc.Index], tc.Function.Arguments...)
			r.size += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
		if r.size > maxReplyBytes {
			return errMisfit
		}
	}
	return nil
}

// completion is the reply as the SDK's completion, for fromCompletion.
func (r *reply) completion() *sdk.ChatCompletion {
	for i := range r.calls {
		r.calls[i].Function.Arguments = string(r.args[i])
	}
	return &sdk.ChatCompletion{ID: r.id, Usage: r.usage, Choices: []sdk.ChatCompletionChoice{{
		FinishReason: r.finish,
		Message:      sdk.ChatCompletionMessage{Content: string(r.content), ToolCalls: r.calls},
	}}}
}
