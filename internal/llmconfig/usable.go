package llmconfig

import (
	"context"

	"waymark/internal/access"
)

// Usable lists the configurations the actor may use (MayUse), by uid.
func (s *Store) Usable(ctx context.Context, a *access.Actor) ([]Configuration, error) {
	list, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	out := []Configuration{}
	for _, c := range list {
		if MayUse(a, c) {
			out = append(out, c)
		}
	}
	return out, nil
}
