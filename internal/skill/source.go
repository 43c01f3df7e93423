package skill

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"waymark/internal/store"
)

// SourceType is where a source's skills come from.
type SourceType string

// The source types.
const (
	// Backend skills are authored in Waymark (API/UI) with a full edit history.
	Backend SourceType = "backend"
	// Directory skills are the subfolders with a SKILL.md of a folder (or a
	// git checkout) on disk, brought in by Sync.
	Directory SourceType = "directory"
)

// Source is a skill source with its trust level (provenance).
type Source struct {
	UID   int64      `json:"uid"`
	Type  SourceType `json:"type"`
	Title string     `json:"title"`
	// Path is the folder of a directory source; empty for a backend source.
	Path  string `json:"path,omitempty"`
	Trust Trust  `json:"trust"`
	// Enabled: a disabled source admits nothing; its skills neither appear in
	// a catalogue or allow-list nor instruct, and their pins fail.
	Enabled   bool      `json:"enabled"`
	UpdatedAt time.Time `json:"updatedAt"`
}

func validateSource(src Source) error {
	switch {
	case src.UID <= 0:
		return invalid("uid", "source uid must be positive, got %d", src.UID)
	case src.Type != Backend && src.Type != Directory:
		return invalid("type", "unknown source type %q: want backend or directory", src.Type)
	case strings.TrimSpace(src.Title) == "":
		return invalid("title", "source %d needs a title", src.UID)
	case src.Trust.Rank() < 0:
		return invalid("trust", "unknown trust level %q: want untrusted, community, verified or first_party", src.Trust)
	case src.Type == Directory && strings.TrimSpace(src.Path) == "":
		return invalid("path", "directory source %d needs a folder path", src.UID)
	case src.Type == Backend && src.Path != "":
		return invalid("path", "backend source %d has no folder path", src.UID)
	}
	return nil
}

// SourcePut is SourcePutTx in a transaction of its own.
func (s *Store) SourcePut(ctx context.Context, src Source) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error { return s.SourcePutTx(ctx, tx, src) })
}

// SourcePutTx inserts or replaces the source with src.UID. A source's type
// cannot change once it exists. A change of the trust level is audited
// (source_trust_changed): it takes effect at the next check of every skill
// of the source. Bad input is an *InvalidError and writes nothing.
func (s *Store) SourcePutTx(ctx context.Context, tx *store.Tx, src Source) error {
	if err := validateSource(src); err != nil {
		return err
	}
	if src.Type == Directory {
		if _, err := s.sourceDir(src.Path); err != nil {
			return err
		}
	}
	old, err := sourceGet(ctx, tx, src.UID, forUpdate(tx))
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return err
	case old.Type != src.Type:
		return invalid("type", "source %d is a %s source; its type cannot change", src.UID, old.Type)
	}
	_, err = tx.Exec(ctx, `INSERT INTO skill_sources (uid, type, title, path, trust_level, enabled, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (uid) DO UPDATE SET title = excluded.title, path = excluded.path,
			trust_level = excluded.trust_level, enabled = excluded.enabled, updated_at = excluded.updated_at`,
		src.UID, string(src.Type), src.Title, src.Path, string(src.Trust), src.Enabled, s.now())
	if err != nil {
		return fmt.Errorf("store skill source %d: %w", src.UID, err)
	}
	if old.UID != 0 && old.Trust != src.Trust {
		return s.audit(ctx, tx, AuditEntry{Event: EventSourceTrustChanged, Source: src.UID,
			Detail: string(old.Trust) + " -> " + string(src.Trust)})
	}
	return nil
}

// SourceGet reads one source; ErrNotFound when there is none.
func (s *Store) SourceGet(ctx context.Context, uid int64) (Source, error) {
	return sourceGet(ctx, s.db, uid, "")
}

// SourceGetTx is SourceGet through q (a transaction that must see its own writes).
func (s *Store) SourceGetTx(ctx context.Context, q store.Querier, uid int64) (Source, error) {
	return sourceGet(ctx, q, uid, "")
}

// SourceList reads every source, ordered by uid.
func (s *Store) SourceList(ctx context.Context) ([]Source, error) {
	out, err := store.Collect(ctx, s.db, scanSource, "SELECT "+sourceColumns+" FROM skill_sources ORDER BY uid")
	if err != nil {
		return nil, fmt.Errorf("list skill sources: %w", err)
	}
	return out, nil
}

const sourceColumns = "uid, type, title, path, trust_level, enabled, updated_at"

func scanSource(sc interface{ Scan(...any) error }) (Source, error) {
	var src Source
	var typ, trust string
	var updated int64
	if err := sc.Scan(&src.UID, &typ, &src.Title, &src.Path, &trust, &src.Enabled, &updated); err != nil {
		return Source{}, err
	}
	src.Type, src.Trust, src.UpdatedAt = SourceType(typ), Trust(trust), store.Time(updated)
	return src, nil
}

func sourceGet(ctx context.Context, q store.Querier, uid int64, suffix string) (Source, error) {
	src, err := scanSource(q.QueryRow(ctx, "SELECT "+sourceColumns+" FROM skill_sources WHERE uid = ?"+suffix, uid))
	if errors.Is(err, sql.ErrNoRows) {
		return Source{}, fmt.Errorf("skill source %d: %w", uid, ErrNotFound)
	}
	if err != nil {
		return Source{}, fmt.Errorf("read skill source %d: %w", uid, err)
	}
	return src, nil
}
