package auth

import (
	"context"
	"fmt"

	"waymark/internal/store"
)

// EndSessionsTx deletes every session of user, so that a disabled user's
// browser is logged out for good (its cookie names nothing any more).
func EndSessionsTx(ctx context.Context, q store.Querier, user int64) error {
	if _, err := q.Exec(ctx, "DELETE FROM sessions WHERE user_uid = ?", user); err != nil {
		return fmt.Errorf("end sessions of user %d: %w", user, err)
	}
	return nil
}

// EndSessionsExceptTx deletes every session of user but the one whose id is
// keep ("": every session), so that a changed password ends the sessions
// opened with the old one and the session that changed it stays.
func EndSessionsExceptTx(ctx context.Context, q store.Querier, user int64, keep string) error {
	if keep == "" {
		return EndSessionsTx(ctx, q, user)
	}
	if _, err := q.Exec(ctx, "DELETE FROM sessions WHERE user_uid = ? AND id_hash <> ?", user, sessionKey(keep)); err != nil {
		return fmt.Errorf("end sessions of user %d: %w", user, err)
	}
	return nil
}
