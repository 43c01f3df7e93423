package access

import (
	"context"
	"fmt"

	"waymark/internal/store"
)

// UILanguages are the languages a user may choose for the UI and the
// assistant (the catalogue languages; stored in be_users.backend_language,
// the field the chat service reads for the assistant's language).
var UILanguages = []string{"de", "en"}

// SetBackendLanguage stores user uid's own choice of language. Anything but
// one of UILanguages is refused as a field error of "backendLanguage" and
// nothing is written; an unknown user is ErrNoUser. Beside TYPO3 the
// language is TYPO3's (be_users.lang, set in TYPO3's user settings):
// ErrManagedElsewhere.
func SetBackendLanguage(ctx context.Context, dir Directory, q store.Querier, uid int64, lang string) error {
	if External(dir) {
		return ErrManagedElsewhere
	}
	known := false
	for _, l := range UILanguages {
		known = known || l == lang
	}
	if !known {
		return invalid("backendLanguage", "want de or en, got %q", lang)
	}
	// Existence is read, not taken from the rows affected: MariaDB counts
	// an update to the same value as no row.
	var n int
	if err := q.QueryRow(ctx, "SELECT COUNT(*) FROM be_users WHERE uid = ?", uid).Scan(&n); err != nil {
		return fmt.Errorf("find user %d: %w", uid, err)
	}
	if n == 0 {
		return ErrNoUser
	}
	if _, err := q.Exec(ctx, "UPDATE be_users SET backend_language = ? WHERE uid = ?", lang, uid); err != nil {
		return fmt.Errorf("set language of user %d: %w", uid, err)
	}
	return nil
}
