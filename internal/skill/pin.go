package skill

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Pin binds a conversation to one approved skill version (ADR-214 item 6).
type Pin struct {
	Skill  int64  `json:"skill"`
	Source int64  `json:"source"`
	Digest string `json:"digest"`
}

// PinReason is why a pin no longer holds. The list is closed and
// append-only; PinCheck reports the first failing one in this order.
type PinReason string

// The pin reasons, in the order PinCheck checks them.
const (
	PinRevoked          PinReason = "revoked"               // no unrevoked approval of (skill, source, digest)
	PinSnapshotMismatch PinReason = "snapshot_mismatch"     // the approval snapshot no longer hashes to the digest
	PinSkillGone        PinReason = "skill_gone"            // the skill no longer exists in that source
	PinOrphaned         PinReason = "orphaned"              // the skill is orphaned or disabled
	PinTrustBelow       PinReason = "trust_below_threshold" // the source is missing, disabled or below the instruction threshold
)

// PinError is a pin that no longer holds. Name is the skill's name as the
// approver saw it (from the snapshot), when there is one.
type PinError struct {
	Pin    Pin
	Name   string
	Reason PinReason
}

func (e *PinError) Error() string {
	return fmt.Sprintf("skill %d (%q) version %s no longer holds: %s", e.Pin.Skill, e.Name, e.Pin.Digest, e.Reason)
}

// PinCheck decides whether a pin still holds, reading the state now, and
// returns the approval snapshot to compose from when it does. Otherwise it
// returns a *PinError with the first failing reason, in the order of the
// PinReason constants. Neither the current digest of the skill nor its
// attachment is checked: an older unrevoked version stays usable by the
// conversations holding it. A failed read is an error (callers refuse).
func (s *Store) PinCheck(ctx context.Context, pin Pin) (Approval, error) {
	var skillUID sql.NullInt64
	var enabled, orphaned, srcEnabled sql.NullBool
	var trust sql.NullString
	row := s.db.QueryRow(ctx, `SELECT ap.id, ap.skill_uid, ap.source_uid, ap.digest, ap.name, ap.description, ap.body,
			ap.support, ap.allowed_tools, ap.process, ap.trust_level, ap.approved_by, ap.approved_at, ap.revoked_by,
			ap.revoked_at, s.uid, s.enabled, s.orphaned, src.trust_level, src.enabled
		FROM skill_approvals ap
		LEFT JOIN skills s ON s.uid = ap.skill_uid AND s.source_uid = ap.source_uid
		LEFT JOIN skill_sources src ON src.uid = ap.source_uid
		WHERE ap.skill_uid = ? AND ap.source_uid = ? AND ap.digest = ?
		ORDER BY ap.id DESC LIMIT 1`, pin.Skill, pin.Source, pin.Digest)
	a, err := scanApproval(scanFunc(func(dst ...any) error {
		return row.Scan(append(dst, &skillUID, &enabled, &orphaned, &trust, &srcEnabled)...)
	}))
	fail := func(r PinReason) (Approval, error) {
		return Approval{}, &PinError{Pin: pin, Name: a.Version.Name, Reason: r}
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fail(PinRevoked)
	case err != nil:
		return Approval{}, fmt.Errorf("pin check of skill %d: %w", pin.Skill, err)
	case a.Revoked():
		return fail(PinRevoked)
	case a.Version.Digest() != pin.Digest:
		return fail(PinSnapshotMismatch)
	case !skillUID.Valid:
		return fail(PinSkillGone)
	case orphaned.Bool || !enabled.Bool:
		return fail(PinOrphaned)
	case !trust.Valid || !srcEnabled.Bool || !s.trustInstructs(Trust(trust.String)):
		return fail(PinTrustBelow)
	}
	return a, nil
}

// scanFunc adapts a function to the Scan interface of scanApproval.
type scanFunc func(dst ...any) error

func (f scanFunc) Scan(dst ...any) error { return f(dst...) }
