package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"waymark/internal/store"
)

// PutTokenTx stores token for user, hashed at bcrypt work factor cost (0:
// DefaultCost; see HashToken), unless the user already has it. Importing the
// same fixture twice therefore stores one row.
func PutTokenTx(ctx context.Context, q store.Querier, user int64, token, label string, now time.Time, cost int) error {
	lookup := TokenLookup(token)
	hashes, err := store.Collect(ctx, q, store.Column[string], "SELECT hash FROM api_tokens WHERE lookup = ? AND user_uid = ?", lookup, user)
	if err != nil {
		return fmt.Errorf("tokens of user %d: %w", user, err)
	}
	for _, h := range hashes {
		if CheckToken(h, token) {
			return nil
		}
	}
	_, hash, err := HashToken(token, cost)
	if err != nil {
		return err
	}
	if _, err := q.Exec(ctx, "INSERT INTO api_tokens (user_uid, lookup, hash, label, created_at) VALUES (?, ?, ?, ?, ?)",
		user, lookup, hash, label, store.Micros(now)); err != nil {
		return fmt.Errorf("store token of user %d: %w", user, err)
	}
	return nil
}

// NewToken returns a fresh random token ("wm_" + 32 random bytes, URL-safe).
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "wm_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// MarkToken sets the password mark of token (access.User.PasswordMark when
// it was issued): a password changed since ends it.
func MarkToken(ctx context.Context, q store.Querier, token, mark string) error {
	if _, err := q.Exec(ctx, "UPDATE api_tokens SET password_mark = ? WHERE lookup = ?", mark, TokenLookup(token)); err != nil {
		return fmt.Errorf("mark token: %w", err)
	}
	return nil
}

// IssueToken creates, stores and returns a new token for user, hashed at
// work factor cost (0: DefaultCost).
func IssueToken(ctx context.Context, q store.Querier, user int64, label string, now time.Time, cost int) (string, error) {
	t := NewToken()
	if err := PutTokenTx(ctx, q, user, t, label, now, cost); err != nil {
		return "", err
	}
	return t, nil
}
