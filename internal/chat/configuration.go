package chat

import (
	"context"

	"waymark/internal/access"
	"waymark/internal/llmconfig"
)

// ConfigurationFor is the configuration a new conversation of the actor
// would use (Start's choice): the UI offers that configuration's processes.
func (s *Service) ConfigurationFor(ctx context.Context, actor int64) (llmconfig.Configuration, error) {
	a, err := access.LoadActor(ctx, s.db, actor)
	if err != nil || !a.Active() {
		return llmconfig.Configuration{}, ErrNotFound
	}
	return s.chatConfig(ctx, a)
}
