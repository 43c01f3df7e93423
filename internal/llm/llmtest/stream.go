package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// streamReply answers with SSE chunks: the content in pieces, each tool call
// as a head (id, name) followed by its arguments in pieces, a chunk with the
// finish reason, the usage when asked for, and [DONE].
func streamReply(ctx context.Context, w http.ResponseWriter, id, model string, r Reply, includeUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(data string) {
		_, _ = fmt.Fprintf(w, "data: %s\n\n", data)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any, u *wireUsage) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 0, "model": model}
		if delta != nil || finish != nil {
			c["choices"] = []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}
		} else {
			c["choices"] = []any{}
		}
		if u != nil {
			c["usage"] = u
		}
		b, _ := json.Marshal(c)
		send(string(b))
	}
	if r.Garbage {
		send(`{"id": "chatcmpl-garbage", "choices": [{"delta"`)
		send("[DONE]")
		return
	}

	var events []map[string]any
	events = append(events, map[string]any{"role": "assistant", "content": ""})
	for _, piece := range split(r.Content) {
		events = append(events, map[string]any{"content": piece})
	}
	firstArgs := -1
	for i, c := range wireCalls(r.ToolCalls) {
		head := map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Function.Name, "arguments": ""}}
		events = append(events, map[string]any{"tool_calls": []any{head}})
		for _, piece := range split(c.Function.Arguments) {
			if firstArgs < 0 {
				firstArgs = len(events)
			}
			events = append(events, map[string]any{"tool_calls": []any{
				map[string]any{"index": i, "function": map[string]any{"arguments": piece}},
			}})
		}
	}

	if r.CutStream {
		cut := len(events) / 2
		if firstArgs >= 0 {
			cut = firstArgs + 1 // inside the first tool call's arguments
		}
		for _, d := range events[:max(cut, 1)] {
			chunk(d, nil, nil)
		}
		panic(http.ErrAbortHandler) // drop the connection mid-reply
	}
	for i, d := range events {
		chunk(d, nil, nil)
		if r.HoldMidway != nil && i == len(events)/2 {
			select {
			case <-r.HoldMidway:
			case <-ctx.Done():
				return
			}
		}
	}
	chunk(map[string]any{}, finishReason(r), nil)
	if includeUsage {
		u := usage(r.Usage)
		chunk(nil, nil, &u)
	}
	send("[DONE]")
}

// split cuts s into up to three pieces, so clients must join deltas.
func split(s string) []string {
	if s == "" {
		return nil
	}
	runes := []rune(s)
	n := len(runes)
	if n < 3 {
		return []string{s}
	}
	a, b := n/3, 2*n/3
	return []string{string(runes[:a]), string(runes[a:b]), string(runes[b:])}
}
