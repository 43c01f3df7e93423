// Package providers is the provider factory of the wiring:
// it turns a model configuration into the llm.Provider that serves it. The
// agent runtime only sees the function (agent.ProviderFunc); internal/app
// builds it with New.
package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"waymark/internal/llm"
	"waymark/internal/llm/demo"
	"waymark/internal/llm/openai"
	"waymark/internal/llm/script"
	"waymark/internal/llmconfig"
)

// New returns the provider function (an agent.ProviderFunc) for the three
// provider types of a configuration: openai (any OpenAI-compatible server,
// key decrypted at the call), demo (the offline model) and script (canned
// replies from the configuration, consumed in order across all runs of that
// configuration, for tests and rehearsals). base carries the client settings
// of openai providers (timeouts, retries, backoff); the configuration fills
// in server, key and model.
func New(configs *llmconfig.Store, base openai.Config) func(ctx context.Context, cfg llmconfig.Configuration) (llm.Provider, error) {
	return NewWithDemo(configs, base, demo.New())
}

// NewWithDemo is New with the offline model demo providers answer with (a
// paced one for `waymark demo --demo-pace`).
func NewWithDemo(configs *llmconfig.Store, base openai.Config, offline llm.Provider) func(ctx context.Context, cfg llmconfig.Configuration) (llm.Provider, error) {
	if base.HTTPClient == nil {
		base.HTTPClient = sharedClient()
	}
	var mu sync.Mutex // guards scripts
	scripts := map[int64]*script.Provider{}
	return func(ctx context.Context, cfg llmconfig.Configuration) (llm.Provider, error) {
		switch cfg.ProviderType {
		case llmconfig.ProviderDemo:
			return offline, nil
		case llmconfig.ProviderScript:
			mu.Lock()
			defer mu.Unlock()
			if p, ok := scripts[cfg.UID]; ok {
				return p, nil
			}
			var replies []script.Reply
			if len(cfg.Script) > 0 {
				if err := json.Unmarshal(cfg.Script, &replies); err != nil {
					return nil, fmt.Errorf("script of configuration %d: %w", cfg.UID, err)
				}
			}
			p, err := script.New(replies)
			if err != nil {
				return nil, err
			}
			scripts[cfg.UID] = p
			return p, nil
		case llmconfig.ProviderOpenAI:
			key, err := configs.APIKey(ctx, cfg.UID)
			if err != nil {
				return nil, err
			}
			c := base
			c.BaseURL, c.APIKey, c.Model = cfg.BaseURL, key, cfg.Model
			return openai.New(c)
		}
		return nil, fmt.Errorf("configuration %d: unknown provider type %q", cfg.UID, cfg.ProviderType)
	}
}

// maxIdlePerHost is how many kept-alive connections to one model server the
// shared client keeps: about as many as calls run at once (chat workers).
const maxIdlePerHost = 64

// sharedClient is the one HTTP client of every openai provider New builds:
// a provider is built for every segment of a run, and without
// a client of its own openai-go cloned a transport each time — a new
// connection per model call, each left idle for 90 s with its buffers and
// goroutines; with 500 conversations that was most of the server's memory.
// Like openai-go's own default it bounds the wait for response headers.
func sharedClient() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{Transport: http.DefaultTransport}
	}
	t = t.Clone()
	t.ResponseHeaderTimeout = 10 * time.Minute
	t.MaxIdleConnsPerHost = maxIdlePerHost
	return &http.Client{Transport: t}
}
