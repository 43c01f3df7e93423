package llmconfig

import (
	"context"
	"errors"
	"fmt"

	"waymark/internal/access"
	"waymark/internal/store"
)

// ActorMayUse reports whether user actorUID may run configuration configUID
// now. It reads the user and its groups as stored at this call — never a copy
// from an earlier decision — and answers false, without an error, for an
// unknown or inactive configuration and for a missing or disabled user.
// Administrators may use every active configuration; other users (service
// accounts included) must belong, directly or through a subgroup, to one of
// the configuration's AllowedGroups, and an empty list admits administrators
// only. A failed read returns false with the error: callers refuse.
func (s *Store) ActorMayUse(ctx context.Context, actorUID, configUID int64) (bool, error) {
	return s.ActorMayUseTx(ctx, s.db, actorUID, configUID)
}

// ActorMayUseTx is ActorMayUse reading through q (a transaction, for a
// decision that must see the same state as the writes beside it).
func (s *Store) ActorMayUseTx(ctx context.Context, q store.Querier, actorUID, configUID int64) (bool, error) {
	c, err := s.GetTx(ctx, q, configUID)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !c.Active {
		return false, nil
	}
	actor, err := access.LoadActor(ctx, s.dir, q, actorUID)
	if errors.Is(err, access.ErrNoUser) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("may user %d use configuration %d: %w", actorUID, configUID, err)
	}
	return MayUse(actor, c), nil
}

// MayUse is the pure rule of ActorMayUse for an actor and configuration the
// caller has just read.
func MayUse(actor *access.Actor, c Configuration) bool {
	if !c.Active || !actor.Active() {
		return false
	}
	if actor.IsAdmin() {
		return true
	}
	for _, g := range c.AllowedGroups {
		if actor.InGroup(g) {
			return true
		}
	}
	return false
}
