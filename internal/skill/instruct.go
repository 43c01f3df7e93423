package skill

import (
	"context"
)

// Instructs applies the instruction rule (ADR-214 item 2) to the skill's live
// version now: it instructs only when its source is enabled with a trust level
// at or above the instruction threshold and the latest approval row of
// (skill, current source, digest of the live fields) is unrevoked and its
// snapshot still hashes to that digest. It returns that approval (to compose
// from) when it instructs. Everything else that is admitted is fenced
// reference data. An unknown skill is ErrNotFound; a failed read is an error
// (callers refuse).
func (s *Store) Instructs(ctx context.Context, skillUID int64) (bool, Approval, error) {
	k, err := s.Get(ctx, skillUID)
	if err != nil {
		return false, Approval{}, err
	}
	src, err := s.SourceGet(ctx, k.Source)
	if err != nil {
		return false, Approval{}, err
	}
	r, a, err := s.rule(ctx, k, src)
	if err != nil || r != "" {
		return false, Approval{}, err
	}
	return true, a, nil
}
