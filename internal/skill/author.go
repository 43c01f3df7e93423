package skill

import (
	"context"
	"fmt"

	"waymark/internal/store"
)

// CreateParams is a new backend skill.
type CreateParams struct {
	// UID is the uid to use (fixtures); 0 allocates one.
	UID        int64
	Source     int64 // a backend source
	Identifier string
	Version    Version
	Actor      int64 // the author, for the history
}

// Create stores a new backend skill, disabled, with its first history
// row and a "created" audit entry, and returns it. The version must be a
// valid SKILL.md within MaxSize whose allowed-tools the registry knows; the
// identifier must be new in the source. Bad input is an error wrapping
// ErrInvalid and stores nothing.
func (s *Store) Create(ctx context.Context, p CreateParams) (Skill, error) {
	var k Skill
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		k, err = s.CreateTx(ctx, tx, p)
		return err
	})
	return k, err
}

// CreateTx is Create inside tx: the skill lands when tx commits.
func (s *Store) CreateTx(ctx context.Context, tx *store.Tx, p CreateParams) (Skill, error) {
	v, fm, err := s.check(fmt.Sprintf("skill %q", p.Identifier), p.Version)
	if err != nil {
		return Skill{}, err
	}
	if err := validIdentifier(p.Identifier); err != nil {
		return Skill{}, err
	}
	src, err := sourceGet(ctx, tx, p.Source, "")
	if err != nil {
		return Skill{}, err
	}
	if src.Type != Backend {
		return Skill{}, invalid("source", "source %d is a %s source: its skills come from sync, not from authoring", src.UID, src.Type)
	}
	if err := identifierFree(ctx, tx, p.Source, p.Identifier); err != nil {
		return Skill{}, err
	}
	uid, err := s.insertSkill(ctx, tx, newSkill{uid: p.UID, source: p.Source, identifier: p.Identifier, version: v, frontMatter: fm})
	if err != nil {
		return Skill{}, err
	}
	if err := s.historyAdd(ctx, tx, uid, p.Actor, v); err != nil {
		return Skill{}, err
	}
	if err := s.audit(ctx, tx, AuditEntry{Event: EventCreated, Skill: uid, Source: p.Source, Digest: v.Digest(), Actor: p.Actor}); err != nil {
		return Skill{}, err
	}
	return skillGet(ctx, tx, uid, "")
}

// identifierFree refuses an identifier the source already has (ErrInvalid).
func identifierFree(ctx context.Context, tx *store.Tx, source int64, identifier string) error {
	var n int
	if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM skills WHERE source_uid = ? AND identifier = ?",
		source, identifier).Scan(&n); err != nil {
		return fmt.Errorf("skill %q: %w", identifier, err)
	}
	if n > 0 {
		return invalid("identifier", "source %d already has a skill %q", source, identifier)
	}
	return nil
}

// newSkill is a skill row to insert.
type newSkill struct {
	uid         int64 // 0: a new one
	source      int64
	identifier  string
	version     Version
	frontMatter string // the raw front matter
}

// insertSkill inserts a disabled, non-orphaned skill row and returns its uid
// (n.uid when non-zero, else a new one).
func (s *Store) insertSkill(ctx context.Context, tx *store.Tx, n newSkill) (int64, error) {
	uid, source, identifier, v, fm := n.uid, n.source, n.identifier, n.version, n.frontMatter
	cols := "source_uid, identifier, name, description, body, support, allowed_tools, process, raw_front_matter, digest, updated_at"
	args := []any{source, identifier, v.Name, v.Description, v.Body, v.Support, encodeTools(v.AllowedTools), v.Process, fm, v.Digest(), s.now()}
	marks := "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?"
	if uid != 0 {
		cols, marks, args = "uid, "+cols, "?, "+marks, append([]any{uid}, args...)
	}
	if err := tx.QueryRow(ctx, "INSERT INTO skills ("+cols+") VALUES ("+marks+") RETURNING uid", args...).Scan(&uid); err != nil {
		return 0, fmt.Errorf("store skill %q of source %d: %w", identifier, source, err)
	}
	if tx.Dialect() == store.Postgres {
		// An explicit uid does not advance the identity; keep it ahead.
		if _, err := tx.Exec(ctx, "SELECT setval(pg_get_serial_sequence('skills', 'uid'), (SELECT MAX(uid) FROM skills))"); err != nil {
			return 0, fmt.Errorf("store skill %q: %w", identifier, err)
		}
	}
	return uid, nil
}

// UpdateParams is an edit of a backend skill.
type UpdateParams struct {
	UID     int64
	Version Version
	Actor   int64
	// Identifier, when set and not the skill's, renames it (it must be new
	// in the source); "" keeps the identifier. A rename alone is no new
	// version: no history row, no audit entry.
	Identifier string
}

// Update stores an edit of a backend skill as a new version: the live
// fields, a history row and an "edited" audit entry with the new digest. An
// edit that yields the same digest and front matter changes nothing. The
// enabled flag stays; an approval of the previous digest no longer matches,
// so the skill stops instructing until its new digest is approved. Directory
// skills change only through Sync. Bad input wraps ErrInvalid and stores nothing.
func (s *Store) Update(ctx context.Context, p UpdateParams) (Skill, error) {
	var k Skill
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		k, err = s.UpdateTx(ctx, tx, p)
		return err
	})
	return k, err
}

// UpdateTx is Update inside tx: the edit lands when tx commits.
func (s *Store) UpdateTx(ctx context.Context, tx *store.Tx, p UpdateParams) (Skill, error) {
	v, fm, err := s.check(fmt.Sprintf("skill %d", p.UID), p.Version)
	if err != nil {
		return Skill{}, err
	}
	old, err := skillGet(ctx, tx, p.UID, forUpdate(tx))
	if err != nil {
		return Skill{}, err
	}
	src, err := sourceGet(ctx, tx, old.Source, "")
	if err != nil {
		return Skill{}, err
	}
	if src.Type != Backend {
		return Skill{}, invalid("source", "skill %d belongs to %s source %d: it changes only through sync", p.UID, src.Type, src.UID)
	}
	identifier := old.Identifier
	if p.Identifier != "" && p.Identifier != old.Identifier {
		if err := validIdentifier(p.Identifier); err != nil {
			return Skill{}, err
		}
		if err := identifierFree(ctx, tx, old.Source, p.Identifier); err != nil {
			return Skill{}, err
		}
		identifier = p.Identifier
	}
	newVersion := old.Digest() != v.Digest() || old.RawFrontMatter != fm
	if !newVersion && identifier == old.Identifier {
		return old, nil
	}
	if _, err := tx.Exec(ctx, `UPDATE skills SET identifier = ?, name = ?, description = ?, body = ?, support = ?, allowed_tools = ?,
		process = ?, raw_front_matter = ?, digest = ?, updated_at = ? WHERE uid = ?`,
		identifier, v.Name, v.Description, v.Body, v.Support, encodeTools(v.AllowedTools), v.Process, fm, v.Digest(), s.now(), p.UID); err != nil {
		return Skill{}, fmt.Errorf("update skill %d: %w", p.UID, err)
	}
	if newVersion {
		if err := s.historyAdd(ctx, tx, p.UID, p.Actor, v); err != nil {
			return Skill{}, err
		}
		if err := s.audit(ctx, tx, AuditEntry{Event: EventEdited, Skill: p.UID, Source: old.Source, Digest: v.Digest(), Actor: p.Actor}); err != nil {
			return Skill{}, err
		}
	}
	return skillGet(ctx, tx, p.UID, "")
}

// SetEnabled switches a skill on or off site-wide and audits the change
// (enabled / disabled); setting the state it already has changes nothing.
// An orphaned skill cannot be enabled (ErrInvalid). The caller decides who
// may do this.
func (s *Store) SetEnabled(ctx context.Context, actor, skillUID int64, enabled bool) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error { return s.SetEnabledTx(ctx, tx, actor, skillUID, enabled) })
}

// SetEnabledTx is SetEnabled inside tx.
func (s *Store) SetEnabledTx(ctx context.Context, tx *store.Tx, actor, skillUID int64, enabled bool) error {
	k, err := skillGet(ctx, tx, skillUID, forUpdate(tx))
	if err != nil {
		return err
	}
	if k.Enabled == enabled {
		return nil
	}
	if enabled && k.Orphaned {
		return invalid("enabled", "skill %d is orphaned: it vanished from its source and cannot be enabled", skillUID)
	}
	if _, err := tx.Exec(ctx, "UPDATE skills SET enabled = ?, updated_at = ? WHERE uid = ?", enabled, s.now(), skillUID); err != nil {
		return fmt.Errorf("enable skill %d: %w", skillUID, err)
	}
	ev := EventDisabled
	if enabled {
		ev = EventEnabled
	}
	return s.audit(ctx, tx, AuditEntry{Event: ev, Skill: skillUID, Source: k.Source, Digest: k.Digest(), Actor: actor})
}
