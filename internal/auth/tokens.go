package auth

import (
	"context"
	"fmt"
	"time"

	"waymark/internal/store"
)

// TokenInfo describes a stored API token without the token or its hash.
type TokenInfo struct {
	ID        int64     `json:"id"`
	Label     string    `json:"label"`
	CreatedAt time.Time `json:"createdAt"`
}

// CountTokens counts user's API tokens (the tokens table is
// read here only).
func CountTokens(ctx context.Context, q store.Querier, user int64) (int, error) {
	var n int
	if err := q.QueryRow(ctx, "SELECT COUNT(*) FROM api_tokens WHERE user_uid = ?", user).Scan(&n); err != nil {
		return 0, fmt.Errorf("tokens of user %d: %w", user, err)
	}
	return n, nil
}

// ListTokens lists user's API tokens, oldest first.
func ListTokens(ctx context.Context, q store.Querier, user int64) ([]TokenInfo, error) {
	rows, err := q.Query(ctx, "SELECT id, label, created_at FROM api_tokens WHERE user_uid = ? ORDER BY id", user)
	if err != nil {
		return nil, fmt.Errorf("tokens of user %d: %w", user, err)
	}
	defer rows.Close()
	out := []TokenInfo{}
	for rows.Next() {
		var t TokenInfo
		var at int64
		if err := rows.Scan(&t.ID, &t.Label, &at); err != nil {
			return nil, fmt.Errorf("tokens of user %d: %w", user, err)
		}
		t.CreatedAt = store.Time(at)
		out = append(out, t)
	}
	return out, rows.Err()
}

// DeleteToken deletes token id of user and reports whether it existed. The
// deletion moves the settings generation, so the token is refused from the
// next request on, cached or not.
func DeleteToken(ctx context.Context, q store.Querier, user, id int64) (bool, error) {
	res, err := q.Exec(ctx, "DELETE FROM api_tokens WHERE id = ? AND user_uid = ?", id, user)
	if err != nil {
		return false, fmt.Errorf("delete token %d of user %d: %w", id, user, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("delete token %d of user %d: %w", id, user, err)
	}
	return n > 0, nil
}
