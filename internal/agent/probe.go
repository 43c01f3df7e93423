package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"waymark/internal/llm"
	"waymark/internal/llmconfig"
)

// probeTimeout bounds a connection test, retries included.
const probeTimeout = 30 * time.Second

// probeMaxTokens keeps the test call tiny.
const probeMaxTokens = 16

// ProbeResult is the answer of a connection test: the model's reply, or the
// classified provider error. It never holds the API key.
type ProbeResult struct {
	OK         bool        `json:"ok"`
	Model      string      `json:"model"`
	Reply      string      `json:"reply,omitempty"`
	Usage      llm.Usage   `json:"usage"`
	DurationMS int64       `json:"durationMs"`
	Error      *ProbeError `json:"error,omitempty"`
}

// ProbeError is a failed connection test: Kind is llm.Kind's word
// (retryable, not_retryable, bad_response) or "setup" when no provider could
// be made (e.g. the stored key does not open), "timeout" when the call took
// longer than the test allows.
type ProbeError struct {
	Kind    string `json:"kind"`
	Status  int    `json:"status,omitempty"`
	Message string `json:"message"`
}

// Probe makes one tiny call to the provider of configuration uid — active or
// not, whoever may use it — the administration's "test connection". A failing
// provider is a result, not an error; the error is ErrConfiguration for an
// unknown uid, or a failed read. Script configurations answer without a
// call, so that a test does not consume their canned replies.
func (rt *Starter) Probe(ctx context.Context, uid int64) (ProbeResult, error) {
	cfg, err := rt.configs.Get(ctx, uid)
	if errors.Is(err, llmconfig.ErrNotFound) {
		return ProbeResult{}, fmt.Errorf("configuration %d: %w", uid, ErrConfiguration)
	}
	if err != nil {
		return ProbeResult{}, err
	}
	res := ProbeResult{Model: cfg.Model}
	if cfg.ProviderType == llmconfig.ProviderScript {
		res.OK, res.Reply = true, "script provider: canned replies, nothing to connect to"
		return res, nil
	}
	p, err := rt.providers(ctx, cfg)
	if err != nil {
		res.Error = &ProbeError{Kind: "setup", Message: err.Error()}
		return res, nil
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	start := rt.clk.Now()
	resp, err := p.Complete(ctx, llm.Request{MaxTokens: probeMaxTokens, Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "Connection test: reply with the single word OK."}}})
	res.DurationMS = rt.clk.Now().Sub(start).Milliseconds()
	var le *llm.Error
	switch {
	case err == nil:
		res.OK, res.Reply, res.Usage = true, resp.Message.Content, resp.Usage
	case errors.As(err, &le):
		res.Error = &ProbeError{Kind: le.Kind.String(), Status: le.Status, Message: le.Error()}
	case errors.Is(err, context.DeadlineExceeded):
		res.Error = &ProbeError{Kind: "timeout", Message: fmt.Sprintf("no answer within %s", probeTimeout)}
	default:
		return ProbeResult{}, err // the caller went away
	}
	return res, nil
}
