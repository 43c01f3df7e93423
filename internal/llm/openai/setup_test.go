package openai

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
)

const testKey = "sk-test-very-secret-4711"

// bundle is what setup returns.
type bundle struct {
	p      *Provider
	srv    *llmtest.Server
	sleeps *sleeps
}

// sleeps records the waits the provider asked for, without waiting.
type sleeps struct {
	mu  sync.Mutex // guards got
	got []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.got = append(s.got, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.got...)
}

// setup starts a scripted server and a provider talking to it with the test
// key, model "test-model", and recorded sleeps; change adjusts the config.
func setup(t *testing.T, change func(*Config), replies ...llmtest.Reply) bundle {
	t.Helper()
	srv := llmtest.NewServer(t, replies...)
	sl := &sleeps{}
	cfg := Config{BaseURL: srv.URL(), APIKey: testKey, Model: "test-model", Sleep: sl.sleep,
		Backoff: func(attempt int) time.Duration { return time.Duration(attempt+1) * time.Second }}
	if change != nil {
		change(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return bundle{p: p, srv: srv, sleeps: sl}
}

func userRequest(text string) llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

// collect returns an OnDelta that records deltas, and a getter.
func collect() (func(llm.Delta), func() []llm.Delta) {
	var got []llm.Delta
	return func(d llm.Delta) { got = append(got, d) }, func() []llm.Delta { return got }
}

// kindOf returns the *llm.Error in err, failing the test when there is none.
func kindOf(t *testing.T, err error) *llm.Error {
	t.Helper()
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Fatalf("error = %v (%T), want *llm.Error", err, err)
	}
	return le
}

func ctxWithTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
