package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
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
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			writeError(w, http.StatusNotFound, "llmtest: no route "+r.Method+" "+r.URL.Path)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeError(w, http.StatusBadRequest, "llmtest: read body: "+err.Error())
			return
		}
		var req wireRequest
		if err := json.Unmarshal(body, &req); err != nil {
			writeError(w, http.StatusBadRequest, "llmtest: bad request body: "+err.Error())
			return
		}
		rec, err := req.decode()
		if err != nil {
			writeError(w, http.StatusBadRequest, "llmtest: "+err.Error())
			return
		}
		rec.Authorization = r.Header.Get("Authorization")
		rec.Body = body
		reply := f(rec)
		id := fmt.Sprintf("chatcmpl-llmtest-h%d", n.Add(1))
		if req.Stream {
			streamReply(w, id, rec.Model, reply, req.StreamOptions.IncludeUsage)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(completion(id, rec.Model, reply))
	})
}
