package chat

import (
	"context"
	"errors"

	"waymark/internal/access"
	"waymark/internal/llmconfig"
)

// ConfigurationFor is the configuration a new conversation of the actor
// would use (Start's choice): the UI offers that configuration's processes.
func (s *Service) ConfigurationFor(ctx context.Context, actor int64) (llmconfig.Configuration, error) {
	a, err := s.activeActor(ctx, actor)
	if err != nil {
		return llmconfig.Configuration{}, err
	}
	return s.chatConfig(ctx, a)
}

// activeActor loads the actor of a request: ErrNotFound for an unknown or
// disabled user, and a failed read as itself — never folded into a 404.
func (s *Service) activeActor(ctx context.Context, actor int64) (*access.Actor, error) {
	a, err := access.LoadActor(ctx, s.dir, s.db, actor)
	if errors.Is(err, access.ErrNoUser) || (err == nil && !a.Active()) {
		return nil, ErrNotFound
	}
	return a, err
}
