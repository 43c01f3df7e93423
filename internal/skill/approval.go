package skill

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"waymark/internal/access"
	"waymark/internal/store"
)

// Approval is a snapshot of one approved skill version: the skill, its source,
// the digest, every digested field, the source's trust level at approval
// time, the approver and the time; and its revocation, if any. Instruction
// sections are composed from it, never from the live record.
type Approval struct {
	ID         int64     `json:"id"`
	Skill      int64     `json:"skill"`
	Source     int64     `json:"source"`
	Digest     string    `json:"digest"`
	Version    Version   `json:"version"`
	Trust      Trust     `json:"trust"` // the source's level when approved (provenance)
	ApprovedBy int64     `json:"approvedBy"`
	ApprovedAt time.Time `json:"approvedAt"`
	RevokedBy  int64     `json:"revokedBy,omitempty"`
	RevokedAt  time.Time `json:"revokedAt,omitzero"`
}

// Revoked reports whether this approval was revoked.
func (a Approval) Revoked() bool { return !a.RevokedAt.IsZero() }

const approvalColumns = `id, skill_uid, source_uid, digest, name, description, body, support, allowed_tools, process,
	trust_level, approved_by, approved_at, revoked_by, revoked_at`

func scanApproval(sc interface{ Scan(...any) error }) (Approval, error) {
	var a Approval
	var tools, trust string
	var at, rat int64
	if err := sc.Scan(&a.ID, &a.Skill, &a.Source, &a.Digest, &a.Version.Name, &a.Version.Description, &a.Version.Body,
		&a.Version.Support, &tools, &a.Version.Process, &trust, &a.ApprovedBy, &at, &a.RevokedBy, &rat); err != nil {
		return Approval{}, err
	}
	t, err := decodeTools(tools)
	if err != nil {
		return Approval{}, fmt.Errorf("approval %d: allowed_tools: %w", a.ID, err)
	}
	a.Version.AllowedTools, a.Trust, a.ApprovedAt, a.RevokedAt = t, Trust(trust), store.Time(at), store.Time(rat)
	return a, nil
}

// latestApproval reads the latest approval row of (skill, source, digest);
// ok is false when there is none. The latest row decides.
func latestApproval(ctx context.Context, q store.Querier, skill, source int64, digest string) (Approval, bool, error) {
	a, err := scanApproval(q.QueryRow(ctx, "SELECT "+approvalColumns+` FROM skill_approvals
		WHERE skill_uid = ? AND source_uid = ? AND digest = ? ORDER BY id DESC LIMIT 1`, skill, source, digest))
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, false, nil
	}
	if err != nil {
		return Approval{}, false, fmt.Errorf("approval of skill %d: %w", skill, err)
	}
	return a, true, nil
}

// Approvals reads every approval row of a skill, oldest first.
func (s *Store) Approvals(ctx context.Context, skillUID int64) ([]Approval, error) {
	return s.ApprovalsTx(ctx, s.db, skillUID)
}

// ApprovalsTx is Approvals through q (a transaction that must see its own writes).
func (s *Store) ApprovalsTx(ctx context.Context, q store.Querier, skillUID int64) ([]Approval, error) {
	out, err := store.Collect(ctx, q, scanApproval, "SELECT "+approvalColumns+" FROM skill_approvals WHERE skill_uid = ? ORDER BY id", skillUID)
	if err != nil {
		return nil, fmt.Errorf("approvals of skill %d: %w", skillUID, err)
	}
	return out, nil
}

// mayApprove reads the actor as stored now: an administrator or a holder of
// the skill_approve grant. A failed read refuses.
func (s *Store) mayApprove(ctx context.Context, q store.Querier, actor int64) (bool, error) {
	a, err := access.LoadActor(ctx, s.dir, q, actor)
	if errors.Is(err, access.ErrNoUser) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return a.Active() && a.HasGrant(access.GrantSkillApprove), nil
}

// DeniedAuditWindow is how long after an audited refusal for want of the
// right (denied) further ones of the same user and operation are not
// audited again: a caller without the right cannot grow the audit trail by
// one row per request.
const DeniedAuditWindow = time.Hour

// refuse audits a refusal in a transaction of its own (the refused operation
// wrote nothing) and returns the *RefusedError. A denied refusal is audited
// once per user, operation and DeniedAuditWindow.
func (s *Store) refuse(ctx context.Context, r approvalRefusal) error {
	return s.refuseOn(ctx, s.db, r)
}

// refuseOn is refuse through q (a caller's transaction for the …Tx forms).
func (s *Store) refuseOn(ctx context.Context, q store.Querier, r approvalRefusal) error {
	ev, e := r.event(), r.err
	ctx = context.WithoutCancel(ctx)
	if e.Case == RefusedDenied {
		var n int
		since := s.now() - DeniedAuditWindow.Microseconds()
		if err := q.QueryRow(ctx, "SELECT COUNT(*) FROM skill_audit WHERE event = ? AND actor_uid = ? AND created_at > ?",
			string(ev), e.Actor, since).Scan(&n); err != nil {
			return fmt.Errorf("%w (and the refusal was not audited: %w)", e, err)
		}
		if n > 0 {
			return e
		}
	}
	if err := s.audit(ctx, q, AuditEntry{Event: ev, Skill: e.Skill, Source: r.source, Digest: e.Digest, Actor: e.Actor, Detail: r.detail}); err != nil {
		return fmt.Errorf("%w (and the refusal was not audited: %w)", e, err)
	}
	return e
}

// Approve approves the skill's current version, ADR-214 item 2: seenDigest is
// the digest the approver was shown. The actor must be an administrator or
// hold the skill_approve grant as stored now; the skill must not be orphaned;
// and seenDigest must equal the digest of the live fields. Each refusal is a
// *RefusedError (denied, stale_digest, orphaned) and an audit entry; an
// unknown skill is ErrNotFound. The right is checked before the skill is
// looked up, so a denied actor is refused alike for known and unknown skills
// and audited once per DeniedAuditWindow. On success one snapshot row is stored with
// the source's trust level now, and audited (approved). Approving a revoked
// digest again is a new, explicit approval: it instructs again.
func (s *Store) Approve(ctx context.Context, actor, skillUID int64, seenDigest string) (Approval, error) {
	ctx = context.WithoutCancel(ctx) // once decided, an approval finishes
	var a Approval
	var r approvalRefusal
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		a, r, err = s.approve(ctx, tx, actor, skillUID, seenDigest)
		return err
	})
	if err != nil {
		return Approval{}, err
	}
	if r.err != nil {
		return Approval{}, s.refuse(ctx, r)
	}
	return a, nil
}

// ApproveTx is Approve inside tx. A refusal is a *RefusedError as for
// Approve, and its audit entry is written in tx: it lands only if the caller
// commits.
func (s *Store) ApproveTx(ctx context.Context, tx *store.Tx, actor, skillUID int64, seenDigest string) (Approval, error) {
	a, r, err := s.approve(ctx, tx, actor, skillUID, seenDigest)
	if err != nil {
		return Approval{}, err
	}
	if r.err != nil {
		return Approval{}, s.refuseOn(ctx, tx, r)
	}
	return a, nil
}

// approvalRefusal is a refused approval or revocation, to be audited by the caller.
type approvalRefusal struct {
	err    *RefusedError // nil: not refused
	source int64
	detail string
	audit  AuditEvent // the event to audit; "": the approval's refusal of err.Case
}

func (r approvalRefusal) event() AuditEvent {
	if r.audit != "" {
		return r.audit
	}
	return map[Refusal]AuditEvent{RefusedDenied: EventApprovalRefusedDenied, RefusedStale: EventApprovalRefusedStale,
		RefusedOrphaned: EventApprovalRefusedOrphan}[r.err.Case]
}

// approve decides and, when allowed, stores the approval in tx.
func (s *Store) approve(ctx context.Context, tx *store.Tx, actor, skillUID int64, seenDigest string) (Approval, approvalRefusal, error) {
	refused := func(c Refusal) *RefusedError {
		return &RefusedError{Op: "approve", Skill: skillUID, Digest: seenDigest, Case: c, Actor: actor}
	}
	// The right first: a caller without it learns nothing of the skill.
	ok, err := s.mayApprove(ctx, tx, actor)
	if err != nil {
		return Approval{}, approvalRefusal{}, fmt.Errorf("approve skill %d: %w", skillUID, err)
	}
	if !ok {
		return Approval{}, approvalRefusal{err: refused(RefusedDenied)}, nil
	}
	k, err := skillGet(ctx, tx, skillUID, forUpdate(tx))
	if err != nil {
		return Approval{}, approvalRefusal{}, err
	}
	current := k.Digest()
	switch {
	case current != seenDigest:
		return Approval{}, approvalRefusal{err: refused(RefusedStale), source: k.Source, detail: "current " + current}, nil
	case k.Orphaned:
		return Approval{}, approvalRefusal{err: refused(RefusedOrphaned), source: k.Source}, nil
	}
	src, err := sourceGet(ctx, tx, k.Source, "")
	if err != nil {
		return Approval{}, approvalRefusal{}, err
	}
	a := Approval{Skill: k.UID, Source: k.Source, Digest: current, Version: k.Version, Trust: src.Trust,
		ApprovedBy: actor, ApprovedAt: store.Time(s.now())}
	v := k.Version
	if err := tx.QueryRow(ctx, `INSERT INTO skill_approvals (skill_uid, source_uid, digest, name, description, body,
		support, allowed_tools, process, trust_level, approved_by, approved_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		a.Skill, a.Source, a.Digest, v.Name, v.Description, v.Body, v.Support, encodeTools(v.AllowedTools), v.Process,
		string(a.Trust), actor, store.Micros(a.ApprovedAt)).Scan(&a.ID); err != nil {
		return Approval{}, approvalRefusal{}, fmt.Errorf("approve skill %d: %w", skillUID, err)
	}
	if err := s.audit(ctx, tx, AuditEntry{Event: EventApproved, Skill: k.UID, Source: k.Source, Digest: current, Actor: actor,
		Detail: "trust " + string(src.Trust)}); err != nil {
		return Approval{}, approvalRefusal{}, err
	}
	return a, approvalRefusal{}, nil
}

// Revoke revokes every unrevoked approval of (skill, digest) and audits it
// (revoked). Revocation wins until an explicit new approval of that digest,
// even when a later edit reproduces the digest byte for byte. The actor needs
// the same right as for Approve. A digest never approved for the skill is a
// *RefusedError (unknown_digest), as is a denied actor (denied, checked
// before the skill is looked up); both are audited, denied once per
// DeniedAuditWindow. Revoking a digest whose approvals are all revoked already changes
// nothing and returns nil. An unknown skill is ErrNotFound.
func (s *Store) Revoke(ctx context.Context, actor, skillUID int64, digest string) error {
	ctx = context.WithoutCancel(ctx)
	var refusal *RefusedError
	var source int64
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		// The right first: a caller without it learns nothing of the skill.
		ok, err := s.mayApprove(ctx, tx, actor)
		if err != nil {
			return fmt.Errorf("revoke skill %d: %w", skillUID, err)
		}
		if !ok {
			refusal = &RefusedError{Op: "revoke", Skill: skillUID, Digest: digest, Case: RefusedDenied, Actor: actor}
			return nil
		}
		k, err := skillGet(ctx, tx, skillUID, forUpdate(tx))
		if err != nil {
			return err
		}
		source = k.Source
		var n int
		if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM skill_approvals WHERE skill_uid = ? AND digest = ?", skillUID, digest).Scan(&n); err != nil {
			return fmt.Errorf("revoke skill %d: %w", skillUID, err)
		}
		if n == 0 {
			refusal = &RefusedError{Op: "revoke", Skill: skillUID, Digest: digest, Case: RefusedUnknownDigest, Actor: actor}
			return nil
		}
		res, err := tx.Exec(ctx, `UPDATE skill_approvals SET revoked_by = ?, revoked_at = ?
			WHERE skill_uid = ? AND digest = ? AND revoked_at = 0`, actor, s.now(), skillUID, digest)
		if err != nil {
			return fmt.Errorf("revoke skill %d: %w", skillUID, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		return s.audit(ctx, tx, AuditEntry{Event: EventRevoked, Skill: skillUID, Source: k.Source, Digest: digest, Actor: actor})
	})
	if err != nil {
		return err
	}
	if refusal != nil {
		ev := EventRevokeRefusedDenied
		if refusal.Case == RefusedUnknownDigest {
			ev = EventRevokeRefusedUnknown
		}
		return s.refuse(ctx, approvalRefusal{err: refusal, source: source, audit: ev})
	}
	return nil
}
