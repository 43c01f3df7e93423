package llmtest

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"

	"waymark/internal/llm"
)

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer k")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = res.Body.Close() })
	return res
}

func TestServerStreamsChunksEndingWithDone(t *testing.T) {
	t.Parallel()
	s := NewServer(t, Reply{Content: "Hallo Welt", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read", Arguments: `{"uid":1}`}}, Usage: llm.Usage{PromptTokens: 3, CompletionTokens: 4}})
	if !strings.HasSuffix(s.URL(), "/v1") {
		t.Errorf("URL = %q, want it to end in /v1", s.URL())
	}
	res := post(t, s.URL()+"/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},
		"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}],
		"tools":[{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}]}`)
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q, want text/event-stream", ct)
	}
	var data []string
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = append(data, line)
		}
	}
	if len(data) < 5 || data[len(data)-1] != "[DONE]" {
		t.Fatalf("events = %q, want several chunks then [DONE]", data)
	}
	all := strings.Join(data, "\n")
	for _, want := range []string{`"finish_reason":"tool_calls"`, `"prompt_tokens":3`, `"name":"read"`} {
		if !strings.Contains(all, want) {
			t.Errorf("stream lacks %s:\n%s", want, all)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Model != "m" || !reqs[0].Stream || reqs[0].Messages[0].Content != "Hi" ||
		reqs[0].Tools[0].Name != "read" || reqs[0].Authorization != "Bearer k" {
		t.Errorf("Requests = %+v, want the decoded request", reqs)
	}
	if s.Remaining() != 0 {
		t.Errorf("Remaining = %d, want 0", s.Remaining())
	}
}

func TestServerAnswersUnknownRouteWith404WithoutUsingAReply(t *testing.T) {
	t.Parallel()
	s := NewServer(t, Reply{Content: "x"})
	res := post(t, s.URL()+"/completions", `{}`)
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "no route") {
		t.Errorf("status = %d, body %s; want 404 no route", res.StatusCode, body)
	}
	if s.Remaining() != 1 || len(s.Requests()) != 0 {
		t.Errorf("Remaining = %d, requests = %d; want 1, 0", s.Remaining(), len(s.Requests()))
	}
	s.Add(Reply{Content: "y"})
	if s.Remaining() != 2 {
		t.Errorf("Remaining after Add = %d, want 2", s.Remaining())
	}
}
