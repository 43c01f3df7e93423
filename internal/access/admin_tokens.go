package access

import (
	"context"
	"time"

	"waymark/internal/auth"
	"waymark/internal/store"
)

// MaxTokenLabel is the longest label of an API token, in bytes.
const MaxTokenLabel = 200

// IssueToken creates an API token for user uid, labelled label, and returns
// it: the one time it is shown (the store keeps its hash) — "create a
// user's API token" of the administration, for the admin JSON API and the users
// screen alike. A label over MaxTokenLabel is a *FieldError, an unknown
// user ErrNoUser; both write nothing. The token is hashed at bcrypt work
// factor hashCost (0: auth.DefaultCost).
func IssueToken(ctx context.Context, dir Directory, db *store.DB, uid int64, label string, now time.Time, hashCost int) (string, error) {
	if len(label) > MaxTokenLabel {
		return "", invalid("label", "at most %d bytes, got %d", MaxTokenLabel, len(label))
	}
	u, err := OrBuiltin(dir).LoadUser(ctx, db, uid)
	if err != nil {
		return "", err
	}
	if External(dir) { // a TYPO3 user who never logged in has no row for the token to name yet
		if err := db.InTx(ctx, func(tx *store.Tx) error { return KeepUserTx(ctx, tx, uid, u.Username) }); err != nil {
			return "", err
		}
	}
	tok, err := auth.IssueToken(ctx, db, uid, label, now, hashCost)
	if err != nil || u.PasswordMark == "" {
		return tok, err
	}
	// Beside TYPO3 the token carries the mark of the user's password: a
	// password changed in TYPO3 ends it.
	return tok, auth.MarkToken(ctx, db, tok, u.PasswordMark)
}
