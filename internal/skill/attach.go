package skill

import (
	"context"
	"fmt"

	"waymark/internal/llmconfig"
	"waymark/internal/store"
)

// LoadMode is how an attached skill reaches a run (ADR-214 item 4).
type LoadMode string

// The load modes.
const (
	Always   LoadMode = "always"    // composed at run start
	OnDemand LoadMode = "on_demand" // listed in the catalogue, loaded when invoked or by the model
)

// Valid reports a known mode.
func (m LoadMode) Valid() bool { return m == Always || m == OnDemand }

// Attachment is one skill attached to a configuration.
type Attachment struct {
	Configuration int64    `json:"configuration"`
	Skill         int64    `json:"skill"`
	Mode          LoadMode `json:"mode"`
}

// Attach is AttachTx in a transaction of its own.
func (s *Store) Attach(ctx context.Context, configUID, skillUID int64, mode LoadMode) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error { return s.AttachTx(ctx, tx, configUID, skillUID, mode) })
}

// AttachTx attaches a skill to a configuration with a load mode, or changes
// the mode of an existing attachment. An unknown mode is ErrInvalid; an
// unknown configuration or skill is ErrNotFound; either writes nothing.
func (s *Store) AttachTx(ctx context.Context, tx *store.Tx, configUID, skillUID int64, mode LoadMode) error {
	if !mode.Valid() {
		return invalid("mode", "unknown load mode %q: want always or on_demand", mode)
	}
	found, err := llmconfig.ExistsTx(ctx, tx, configUID)
	if err != nil {
		return fmt.Errorf("attach skill %d: %w", skillUID, err)
	}
	if !found {
		return fmt.Errorf("configuration %d: %w", configUID, ErrNotFound)
	}
	if _, err := skillGet(ctx, tx, skillUID, ""); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO skill_attachments (configuration_uid, skill_uid, load_mode) VALUES (?, ?, ?)
		ON CONFLICT (configuration_uid, skill_uid) DO UPDATE SET load_mode = excluded.load_mode`,
		configUID, skillUID, string(mode)); err != nil {
		return fmt.Errorf("attach skill %d to configuration %d: %w", skillUID, configUID, err)
	}
	return nil
}

// Detach removes an attachment; ErrNotFound when there is none. A pin of the
// skill ends at the next continuation (the caller's rule), not here.
func (s *Store) Detach(ctx context.Context, configUID, skillUID int64) error {
	res, err := s.db.Exec(ctx, "DELETE FROM skill_attachments WHERE configuration_uid = ? AND skill_uid = ?", configUID, skillUID)
	if err != nil {
		return fmt.Errorf("detach skill %d from configuration %d: %w", skillUID, configUID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("detach skill %d from configuration %d: %w", skillUID, configUID, err)
	} else if n == 0 {
		return fmt.Errorf("skill %d on configuration %d: %w", skillUID, configUID, ErrNotFound)
	}
	return nil
}

// Attachments lists a configuration's attachments by skill uid, whatever the
// state of the skills.
func (s *Store) Attachments(ctx context.Context, configUID int64) ([]Attachment, error) {
	return s.AttachmentsTx(ctx, s.db, configUID)
}

// AttachmentsTx is Attachments through q (a transaction that must see its own writes).
func (s *Store) AttachmentsTx(ctx context.Context, q store.Querier, configUID int64) ([]Attachment, error) {
	out, err := store.Collect(ctx, q, func(sc store.Scanner) (Attachment, error) {
		var a Attachment
		var m string
		err := sc.Scan(&a.Configuration, &a.Skill, &m)
		a.Mode = LoadMode(m)
		return a, err
	}, `SELECT configuration_uid, skill_uid, load_mode FROM skill_attachments
		WHERE configuration_uid = ? ORDER BY skill_uid`, configUID)
	if err != nil {
		return nil, fmt.Errorf("attachments of configuration %d: %w", configUID, err)
	}
	return out, nil
}
