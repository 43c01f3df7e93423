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

// stream makes one streaming call, passing content and tool-call names to
// onDelta as they arrive and accumulating the reply.
func (p *Provider) stream(ctx context.Context, params sdk.ChatCompletionNewParams, onDelta func(llm.Delta), opts ...option.RequestOption) (llm.Response, error) {
	params.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
	s := p.client.Chat.Completions.NewStreaming(ctx, params, opts...)
	defer s.Close()
	acc := &sdk.ChatCompletionAccumulator{}
	named := map[int64]bool{} // tool-call indexes already announced
	for s.Next() {
		chunk := s.Current()
		if !acc.AddChunk(chunk) {
			return llm.Response{}, &llm.Error{Kind: llm.KindBadResponse, Err: errors.New("stream chunk does not fit the reply so far")}
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if ch.Delta.Content != "" {
				onDelta(llm.Delta{Content: store.Storable(ch.Delta.Content)})
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Function.Name != "" && !named[tc.Index] {
					named[tc.Index] = true
					onDelta(llm.Delta{ToolCallName: tc.Function.Name})
				}
			}
		}
	}
	if err := s.Err(); err != nil {
		return llm.Response{}, err
	}
	if len(acc.Choices) == 0 || acc.Choices[0].FinishReason == "" {
		return llm.Response{}, &llm.Error{Kind: llm.KindRetryable, Err: errIncomplete}
	}
	return fromCompletion(&acc.ChatCompletion)
}
