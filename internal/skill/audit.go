package skill

import (
	"context"
	"fmt"
	"time"

	"waymark/internal/store"
)

// AuditEvent names an entry of the append-only skill audit trail. The list is
// closed and append-only.
type AuditEvent string

// The audit events.
const (
	EventApproved              AuditEvent = "approved"
	EventApprovalRefusedStale  AuditEvent = "approval_refused_stale"
	EventApprovalRefusedOrphan AuditEvent = "approval_refused_orphaned"
	EventApprovalRefusedDenied AuditEvent = "approval_refused_denied"
	EventRevoked               AuditEvent = "revoked"
	EventRevokeRefusedDenied   AuditEvent = "revocation_refused_denied"
	EventRevokeRefusedUnknown  AuditEvent = "revocation_refused_unknown_digest"
	EventEnabled               AuditEvent = "enabled"
	EventDisabled              AuditEvent = "disabled"
	EventDisabledOnChange      AuditEvent = "disabled_on_change" // sync: an enabled skill's digest changed
	EventOrphaned              AuditEvent = "orphaned"           // sync: the skill vanished upstream
	EventSynced                AuditEvent = "synced"             // sync: a skill arrived, changed or came back
	EventCreated               AuditEvent = "created"            // backend skill authored
	EventEdited                AuditEvent = "edited"             // backend skill: a new version
	EventSourceTrustChanged    AuditEvent = "source_trust_changed"
	EventSyncRefusedOutside    AuditEvent = "sync_refused_outside_root" // sync: the folder leads out of the skills root
	EventSyncRefusedSymlink    AuditEvent = "sync_refused_symlink"      // sync: a SKILL.md leads out of its folder
)

// AuditEntry is one row of the audit trail. Actor 0 is the system (sync).
type AuditEntry struct {
	ID     int64      `json:"id"`
	Event  AuditEvent `json:"event"`
	Skill  int64      `json:"skill,omitempty"`
	Source int64      `json:"source,omitempty"`
	Digest string     `json:"digest,omitempty"`
	Actor  int64      `json:"actor"`
	Detail string     `json:"detail,omitempty"`
	At     time.Time  `json:"at"`
}

// audit appends e (At is the store's clock) through q.
func (s *Store) audit(ctx context.Context, q store.Querier, e AuditEntry) error {
	_, err := q.Exec(ctx, `INSERT INTO skill_audit (event, skill_uid, source_uid, digest, actor_uid, detail, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, string(e.Event), e.Skill, e.Source, e.Digest, e.Actor, e.Detail, s.now())
	if err != nil {
		return fmt.Errorf("audit %s of skill %d: %w", e.Event, e.Skill, err)
	}
	return nil
}

// Audit reads the audit trail of one skill, oldest first; skill 0 reads the
// entries that name no skill (source events).
func (s *Store) Audit(ctx context.Context, skillUID int64) ([]AuditEntry, error) {
	out, err := store.Collect(ctx, s.db, func(sc store.Scanner) (AuditEntry, error) {
		var e AuditEntry
		var ev string
		var at int64
		err := sc.Scan(&e.ID, &ev, &e.Skill, &e.Source, &e.Digest, &e.Actor, &e.Detail, &at)
		e.Event, e.At = AuditEvent(ev), store.Time(at)
		return e, err
	}, `SELECT id, event, skill_uid, source_uid, digest, actor_uid, detail, created_at
		FROM skill_audit WHERE skill_uid = ? ORDER BY id`, skillUID)
	if err != nil {
		return nil, fmt.Errorf("audit of skill %d: %w", skillUID, err)
	}
	return out, nil
}
