package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Handler answers each request from the request itself (the model of
// `waymark bench`), and refuses another route and a bad body like Server.
func TestHandlerRepliesFromTheRequestAndRefusesBadOnes(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex // guards seen
	var seen []RecordedRequest
	hs := httptest.NewServer(Handler(func(r RecordedRequest) Reply {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r)
		return Reply{Content: "echo " + r.Messages[len(r.Messages)-1].Content}
	}))
	t.Cleanup(hs.Close)
	res := post(t, hs.URL+"/v1/chat/completions", `{"model": "m", "messages": [{"role": "user", "content": "hallo"}]}`)
	var got struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || got.Model != "m" || len(got.Choices) != 1 || got.Choices[0].Message.Content != "echo hallo" {
		t.Errorf("answer = %d %+v, want 200 echo hallo from model m", res.StatusCode, got)
	}
	requests := func() []RecordedRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]RecordedRequest(nil), seen...)
	}
	if seen := requests(); len(seen) != 1 || seen[0].Authorization != "Bearer k" || !strings.Contains(string(seen[0].Body), "hallo") {
		t.Errorf("the reply function saw %+v", seen)
	}
	for _, c := range []struct {
		path, body string
		status     int
		says       string
	}{
		{"/v1/completions", `{}`, http.StatusNotFound, "no route"},
		{"/v1/chat/completions", `{"model": `, http.StatusBadRequest, "bad request body"},
	} {
		res := post(t, hs.URL+c.path, c.body)
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != c.status || !strings.Contains(string(body), c.says) {
			t.Errorf("%s %s = %d %s, want %d %s", c.path, c.body, res.StatusCode, body, c.status, c.says)
		}
	}
	if n := len(requests()); n != 1 {
		t.Errorf("refused requests reached the reply function: %d calls", n)
	}
}
