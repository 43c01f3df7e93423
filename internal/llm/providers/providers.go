// Package providers is the provider factory of the wiring (issue 16 item 5):
// it turns a model configuration into the llm.Provider that serves it. The
// agent runtime only sees the function (agent.ProviderFunc); internal/app
// builds it with New.
package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

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
	var mu sync.Mutex // guards scripts
	scripts := map[int64]*script.Provider{}
	return func(ctx context.Context, cfg llmconfig.Configuration) (llm.Provider, error) {
		switch cfg.ProviderType {
		case llmconfig.ProviderDemo:
			return demo.New(), nil
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
