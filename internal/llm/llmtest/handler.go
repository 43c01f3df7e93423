package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
)

// Handler is an OpenAI-compatible chat-completions handler that computes
// each reply from the request with f, at zero latency: the model of load
// drivers such as `waymark bench`, where many conversations run at once and
// a reply in order cannot know whose turn it is. Only Content, ToolCalls,
// FinishReason and Usage of the reply are used (no faults). It needs no
// testing.TB, so a command can serve it.
func Handler(f func(RecordedRequest) Reply) http.Handler {
	var n atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, rec, ok := readRequest(w, r, nil)
		if !ok {
			return
		}
		reply := f(rec)
		id := fmt.Sprintf("chatcmpl-llmtest-h%d", n.Add(1))
		if req.Stream {
			streamReply(r.Context(), w, id, rec.Model, reply, req.StreamOptions.IncludeUsage)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(completion(id, rec.Model, reply))
	})
}
