package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"waymark/internal/llm"
)

// Reply is one scripted answer of the server. Without a fault it answers
// with Content and/or ToolCalls, FinishReason (default "tool_calls" when
// there are tool calls, else "stop") and Usage.
type Reply struct {
	Content      string
	ToolCalls    []llm.ToolCall
	FinishReason string
	Usage        llm.Usage

	// Status, when non-zero, answers with this HTTP status and an OpenAI
	// error body carrying ErrorMessage; RetryAfter sets the Retry-After header.
	Status       int
	RetryAfter   string
	ErrorMessage string
	// Garbage answers 200 with a body that is not valid JSON (or, when
	// streaming, an SSE event whose data is not valid JSON).
	Garbage bool
	// CutStream, when streaming, sends the first half of the reply (inside
	// the first tool call's arguments when there are tool calls) and then
	// drops the connection. Without streaming it is ignored.
	CutStream bool
	// RawBody, when set, answers with exactly this body: with Status as
	// text/html, else 200 as text/event-stream when the request streams and
	// application/json when not.
	RawBody string
	// Delay waits this long before answering, or until the client goes away.
	Delay time.Duration
	// Before, when set, runs once the request arrived and before it is
	// answered: where a test lands a concurrent change while the model
	// "thinks", without sleeping.
	Before func()
	// Arrived, when set, is closed once the request this reply answers has
	// arrived (before Delay): a test learns that a model call is under way.
	Arrived chan struct{}
	// Hold, when set, keeps the answer back until it is closed or the client
	// goes away (a model call that hangs).
	Hold chan struct{}
	// Gone, when set, is closed when the client went away while Hold or
	// Delay kept the answer back: a test learns that the call was cut short.
	Gone chan struct{}
	// HoldMidway, when streaming, sends the first part of the reply and keeps
	// the rest back until it is closed or the client goes away (a model
	// that is still writing).
	HoldMidway chan struct{}
}

func (r Reply) gone() {
	if r.Gone != nil {
		close(r.Gone)
	}
}

// RecordedRequest is one request the server received, decoded.
type RecordedRequest struct {
	Model         string
	Messages      []llm.Message
	Tools         []llm.ToolSpec
	MaxTokens     int
	Stream        bool
	Authorization string // the Authorization header as sent
	Body          []byte // the raw JSON body
}

// TB is the part of testing.TB a Server uses (a *testing.T passes): the
// package does not import testing, so that `waymark bench`, which serves
// Handler, does not link it into the binary.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Cleanup(func())
}

// Server is a scripted OpenAI-compatible server. Its methods are safe for
// concurrent use.
type Server struct {
	t   TB
	srv *httptest.Server

	mu       sync.Mutex // guards replies, next and requests
	replies  []Reply
	next     int
	requests []RecordedRequest
}

// NewServer starts a server answering with replies in order; it is closed
// when the test ends. A request beyond the script fails the test and gets a
// 400 answer.
func NewServer(t TB, replies ...Reply) *Server {
	t.Helper()
	s := &Server{t: t, replies: append([]Reply(nil), replies...)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.srv.Close)
	return s
}

// URL returns the base URL of the API, ending in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Add appends replies to the script.
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []RecordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RecordedRequest(nil), s.requests...)
}

// Remaining returns how many scripted replies have not been used.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies) - s.next
}

// readRequest reads a chat completion request. Anything else it answers
// (404 for another route, 400 for a bad body) and returns false; bad, when
// set, is told of a body that is no chat completion request (a Server fails
// its test with it).
func readRequest(w http.ResponseWriter, r *http.Request, bad func(format string, args ...any)) (wireRequest, RecordedRequest, bool) {
	var req wireRequest
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "llmtest: no route "+r.Method+" "+r.URL.Path)
		return req, RecordedRequest{}, false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: read body: "+err.Error())
		return req, RecordedRequest{}, false
	}
	if bad == nil {
		bad = func(string, ...any) {}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		bad("llmtest: request body is not a chat completion request: %v", err)
		writeError(w, http.StatusBadRequest, "llmtest: bad request body: "+err.Error())
		return req, RecordedRequest{}, false
	}
	rec, err := req.decode()
	if err != nil {
		bad("llmtest: %v", err)
		writeError(w, http.StatusBadRequest, "llmtest: "+err.Error())
		return req, RecordedRequest{}, false
	}
	rec.Authorization = r.Header.Get("Authorization")
	rec.Body = body
	return req, rec, true
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	req, rec, ok := readRequest(w, r, s.t.Errorf)
	if !ok {
		return
	}

	s.mu.Lock()
	s.requests = append(s.requests, rec)
	n := s.next
	var reply Reply
	ok = n < len(s.replies)
	if ok {
		reply = s.replies[n]
		s.next++
	}
	s.mu.Unlock()
	if !ok {
		s.t.Errorf("llmtest: request %d has no scripted reply", n+1)
		writeError(w, http.StatusBadRequest, fmt.Sprintf("llmtest: request %d has no scripted reply", n+1))
		return
	}

	if reply.Before != nil {
		reply.Before()
	}
	if reply.Arrived != nil {
		close(reply.Arrived)
	}
	if reply.Hold != nil {
		select {
		case <-reply.Hold:
		case <-r.Context().Done():
			reply.gone()
			return
		}
	}
	if reply.Delay > 0 {
		timer := time.NewTimer(reply.Delay)
		select {
		case <-timer.C:
		case <-r.Context().Done():
			timer.Stop()
			reply.gone()
			return
		}
	}
	id := fmt.Sprintf("chatcmpl-llmtest-%d", n+1)
	switch {
	case reply.Status != 0:
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		if reply.RawBody != "" {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(reply.Status)
			_, _ = io.WriteString(w, reply.RawBody)
			return
		}
		writeError(w, reply.Status, cmpOr(reply.ErrorMessage, http.StatusText(reply.Status)))
	case reply.RawBody != "":
		w.Header().Set("Content-Type", "application/json")
		if req.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		_, _ = io.WriteString(w, reply.RawBody)
	case req.Stream:
		streamReply(r.Context(), w, id, rec.Model, reply, req.StreamOptions.IncludeUsage)
	case reply.Garbage:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id": "chatcmpl-garbage", "choices": [{"mess`)
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(completion(id, rec.Model, reply))
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": msg, "type": "llmtest_error", "code": nil, "param": nil},
	})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func finishReason(r Reply) string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(r.ToolCalls) > 0:
		return llm.FinishToolCalls
	}
	return llm.FinishStop
}
