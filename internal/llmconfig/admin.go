package llmconfig

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"waymark/internal/access"
	"waymark/internal/fault"
	"waymark/internal/store"
)

// ErrTaken is returned by Create and Update when another configuration has
// the identifier, or Create is given a uid that exists; the error names the
// field ("identifier" or "uid").
var ErrTaken = fault.Detailed(fault.Conflict, "conflict", "already taken")

// Create stores a new configuration as an administrator enters it:
// a zero UID takes the next free one; c.APIKey, when set, is sealed. It
// validates like PutTx and also refuses allowed groups that do not exist
// (*FieldError) and a taken identifier or uid (ErrTaken), writing nothing.
// It returns the configuration as stored, without its key.
func (s *Store) Create(ctx context.Context, c Configuration) (Configuration, error) {
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := store.LockSettingsTx(ctx, tx); err != nil {
			return err
		}
		if c.UID == 0 {
			if err := tx.QueryRow(ctx, "SELECT COALESCE(MAX(uid), 0) + 1 FROM configurations").Scan(&c.UID); err != nil {
				return fmt.Errorf("next configuration uid: %w", err)
			}
		} else if _, err := s.sealedKey(ctx, tx, c.UID); err == nil {
			return fmt.Errorf("configuration %d: uid: %w", c.UID, ErrTaken)
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		if err := s.check(ctx, tx, c); err != nil {
			return err
		}
		sealed, err := s.seal(c.APIKey)
		if err != nil {
			return fmt.Errorf("configuration %d: %w", c.UID, err)
		}
		return s.putSealedTx(ctx, tx, withDefaults(c), sealed)
	})
	if err != nil {
		return Configuration{}, err
	}
	return s.Get(ctx, c.UID)
}

// Update replaces every field of the existing configuration c.UID with c's,
// except the API key: key nil keeps the stored key, "" removes it, anything
// else is sealed and replaces it (the key is write-only). It returns
// ErrNotFound for an unknown uid and refuses what Create refuses, writing
// nothing.
func (s *Store) Update(ctx context.Context, c Configuration, key *string) (Configuration, error) {
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := store.LockSettingsTx(ctx, tx); err != nil {
			return err
		}
		sealed, err := s.sealedKey(ctx, tx, c.UID)
		if err != nil {
			return err
		}
		if err := s.check(ctx, tx, c); err != nil {
			return err
		}
		if key != nil {
			if sealed, err = s.seal(*key); err != nil {
				return fmt.Errorf("configuration %d: %w", c.UID, err)
			}
		}
		return s.putSealedTx(ctx, tx, withDefaults(c), sealed)
	})
	if err != nil {
		return Configuration{}, err
	}
	return s.Get(ctx, c.UID)
}

// Check reports, writing nothing, every field that Create (a zero UID) or
// Update would refuse — for a form whose other fields did not even parse, so
// that it shows all its errors in one answer.
func (s *Store) Check(ctx context.Context, c Configuration) error {
	if c.UID == 0 {
		c.UID = math.MaxInt32 // a new configuration's uid is chosen when it is stored
	}
	return s.check(ctx, s.db, c)
}

// check validates c and what Validate cannot see alone: the identifier is
// free and every allowed group exists. Every wrong field is reported at once.
func (s *Store) check(ctx context.Context, q store.Querier, c Configuration) error {
	bad := access.FieldErrors(access.SplitFieldErrors(Validate(c)))
	var other int64
	err := q.QueryRow(ctx, "SELECT uid FROM configurations WHERE identifier = ? AND uid <> ?", c.Identifier, c.UID).Scan(&other)
	switch {
	case err == nil:
		bad = append(bad, fmt.Errorf("configuration %d: identifier %q is used by configuration %d: %w", c.UID, c.Identifier, other, ErrTaken))
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("check identifier %q: %w", c.Identifier, err)
	}
	for _, g := range c.AllowedGroups {
		if g <= 0 {
			continue // Validate reported it
		}
		ok, err := access.GroupExists(ctx, s.dir, q, g)
		if err != nil {
			return err
		}
		if !ok {
			bad = append(bad, &FieldError{UID: c.UID, Field: "allowedGroups", Reason: fmt.Sprintf("no group %d", g)})
			break
		}
	}
	return fieldErrors(bad)
}

// sealedKey reads the sealed API key of configuration uid; ErrNotFound when none has it.
func (s *Store) sealedKey(ctx context.Context, q store.Querier, uid int64) (string, error) {
	var sealed string
	err := q.QueryRow(ctx, "SELECT api_key_sealed FROM configurations WHERE uid = ?", uid).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("configuration %d: %w", uid, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("read configuration %d: %w", uid, err)
	}
	return sealed, nil
}
