package secret

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"waymark/internal/store"
)

// checkText is what the check value seals.
const checkText = "waymark secret key check v1"

// ErrWrongKey is returned by CheckKey when the key does not open the
// database's check value (or its sealed provider keys).
var ErrWrongKey = errors.New("secret key does not open this database")

// CheckKey proves that box's key is the one db's secrets were sealed with.
// The first process stores a check value sealed with its
// key; every later one must open it. A database from before the check value
// is first tried on a sealed provider key, which legacy reads (its owner,
// llmconfig, answers: FirstSealedKey; ok false when none is stored). source
// names where the key came from, for the message; the error is one line
// naming the fix.
func CheckKey(ctx context.Context, db *store.DB, box *Box, source string, legacy func(context.Context) (sealed string, ok bool, err error)) error {
	wrong := func() error {
		return fmt.Errorf("%w (key from %s): start with the key this database was set up with "+
			"(%s, or the %s it was generated in; see --data-dir)", ErrWrongKey, source, EnvKey, KeyFile)
	}
	var sealed string
	err := db.QueryRow(ctx, "SELECT sealed FROM secret_key_check WHERE id = 1").Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		old, ok, err := legacy(ctx)
		if err != nil {
			return fmt.Errorf("secret key check: %w", err)
		}
		if ok {
			if _, err := box.Open(old); err != nil {
				return wrong()
			}
		}
		v, err := box.Seal(checkText)
		if err != nil {
			return fmt.Errorf("secret key check: %w", err)
		}
		if _, err := db.Exec(ctx, "INSERT INTO secret_key_check (id, sealed) VALUES (1, ?) ON CONFLICT (id) DO NOTHING", v); err != nil {
			return fmt.Errorf("secret key check: %w", err)
		}
		// Another process may have been first, with its key: read what won.
		err = db.QueryRow(ctx, "SELECT sealed FROM secret_key_check WHERE id = 1").Scan(&sealed)
		if err != nil {
			return fmt.Errorf("secret key check: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("secret key check: %w", err)
	}
	if got, err := box.Open(sealed); err != nil || got != checkText {
		return wrong()
	}
	return nil
}

// ErrKeyMissing is returned by Sealed's callers (app.New) when the database
// holds sealed values but no key was found: generating one would only make
// the database unusable with a key file that opens nothing in it.
var ErrKeyMissing = errors.New("this database holds values sealed with a secret key, but the key is missing")

// Sealed reports whether db holds values sealed with a key: the check value
// of CheckKey or, in a database from before it, a sealed provider key that
// legacy finds.
func Sealed(ctx context.Context, db *store.DB, legacy func(context.Context) (sealed string, ok bool, err error)) (bool, error) {
	var n int
	if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM secret_key_check").Scan(&n); err != nil {
		return false, fmt.Errorf("secret key check: %w", err)
	}
	if n > 0 {
		return true, nil
	}
	_, ok, err := legacy(ctx)
	if err != nil {
		return false, fmt.Errorf("secret key check: %w", err)
	}
	return ok, nil
}
