package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"waymark/internal/llm"
)

// Provider is an llm.Provider talking to an OpenAI-compatible server. It is
// safe for concurrent use.
type Provider struct {
	cfg    Config
	client sdk.Client
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider for cfg, after filling defaults and checking it.
func New(cfg Config) (*Provider, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0), // Complete retries itself
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	if cfg.APIKey == "" {
		opts = append(opts, option.WithHeaderDel("Authorization"))
	}
	return &Provider{cfg: cfg, client: sdk.NewClient(opts...)}, nil
}

// Complete sends req, retrying retryable failures up to Config.MaxRetries
// times. The wait before a retry is the server's Retry-After when it sent
// one, else Config.Backoff. It returns the last failure as an *llm.Error with
// Attempts set, or ctx.Err() once ctx ends. When req.OnDelta is set the
// reply is streamed; a retried stream first delivers a Delta with Restart.
func (p *Provider) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	params, err := p.params(req)
	if err != nil {
		return llm.Response{}, err
	}
	streamed := false
	onDelta := req.OnDelta
	if onDelta != nil {
		onDelta = func(d llm.Delta) {
			streamed = true
			req.OnDelta(d)
		}
	}
	for attempt := 0; ; attempt++ {
		if attempt > 0 && streamed {
			req.OnDelta(llm.Delta{Restart: true})
			streamed = false
		}
		resp, err := p.attempt(ctx, params, onDelta)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return llm.Response{}, ctx.Err()
		}
		var le *llm.Error
		if !errors.As(err, &le) {
			le = &llm.Error{Kind: llm.KindRetryable, Err: err}
		}
		le.Attempts = attempt + 1
		if le.Kind != llm.KindRetryable || attempt >= p.cfg.MaxRetries {
			return llm.Response{}, le
		}
		wait := le.RetryAfter
		if wait <= 0 {
			wait = p.cfg.Backoff(attempt)
		}
		if err := p.cfg.Sleep(ctx, wait); err != nil {
			if ctx.Err() != nil {
				return llm.Response{}, ctx.Err()
			}
			return llm.Response{}, err
		}
	}
}

// attempt makes one call under Config.Timeout.
func (p *Provider) attempt(ctx context.Context, params sdk.ChatCompletionNewParams, onDelta func(llm.Delta)) (llm.Response, error) {
	actx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	seen := response{buffer: onDelta == nil}
	mw := option.WithMiddleware(seen.record)
	var resp llm.Response
	var err error
	if onDelta != nil {
		resp, err = p.stream(actx, params, onDelta, mw)
	} else {
		var c *sdk.ChatCompletion
		c, err = p.client.Chat.Completions.New(actx, params, mw)
		if err == nil {
			resp, err = fromCompletion(c)
		}
	}
	if err == nil {
		return resp, nil
	}
	if ctx.Err() != nil {
		return llm.Response{}, ctx.Err()
	}
	return llm.Response{}, p.classify(err, &seen, actx.Err() != nil)
}

// response remembers the status and headers of the HTTP response of an
// attempt, whatever openai-go makes of its body. When buffer is set (not
// streaming) it reads the whole body first, so a connection lost while
// reading (retryable) is told apart from a body that does not parse (bad).
type response struct {
	buffer bool

	mu      sync.Mutex // guards status, header and readErr
	status  int
	header  http.Header
	readErr error
}

func (r *response) record(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if res == nil {
		return res, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status, r.header = res.StatusCode, res.Header.Clone()
	if r.buffer && err == nil && res.Body != nil {
		body, readErr := io.ReadAll(res.Body)
		_ = res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(body))
		if readErr != nil {
			r.readErr = readErr
			return nil, readErr
		}
	}
	return res, err
}

func (r *response) get() (status int, header http.Header, buffered bool, readErr error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status, r.header, r.buffer && r.status != 0, r.readErr
}

// redact removes the API key from a text that came from elsewhere (a server
// message, a transport error).
func (p *Provider) redact(s string) string {
	if p.cfg.APIKey != "" {
		s = strings.ReplaceAll(s, p.cfg.APIKey, "[redacted]")
	}
	const maxLen = 500
	if len(s) > maxLen {
		s = s[:maxLen] + "…"
	}
	return s
}

func (p *Provider) errorf(format string, args ...any) error {
	return errors.New(p.redact(fmt.Sprintf(format, args...)))
}
