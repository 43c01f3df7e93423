package skill

import (
	"context"
	"fmt"
)

// Reason is why a skill does not instruct now ("whether
// it instructs and why not"). The empty reason means it instructs.
type Reason string

// The reasons, in the order Standing checks them.
const (
	// ReasonOrphaned: the skill vanished from its directory source.
	ReasonOrphaned Reason = "orphaned"
	// ReasonDisabled: the skill's site-wide switch is off.
	ReasonDisabled Reason = "disabled"
	// ReasonSourceDisabled: its source is switched off and admits nothing.
	ReasonSourceDisabled Reason = "source_disabled"
	// ReasonUntrusted: its source's trust level is below the instruction threshold.
	ReasonUntrusted Reason = "untrusted_source"
	// ReasonRevoked: the latest approval of the current digest was revoked.
	ReasonRevoked Reason = "revoked"
	// ReasonNoApproval: the current digest was never approved (or its
	// snapshot no longer hashes to it).
	ReasonNoApproval Reason = "no_approval"
)

// rule applies the instruction rule (ADR-214 item 2) to k of src: the reason
// it does not instruct ("" when it does) and the approval it instructs from.
func (s *Store) rule(ctx context.Context, k Skill, src Source) (Reason, Approval, error) {
	switch {
	case !src.Enabled:
		return ReasonSourceDisabled, Approval{}, nil
	case !s.trustInstructs(src.Trust):
		return ReasonUntrusted, Approval{}, nil
	}
	a, ok, err := latestApproval(ctx, s.db, k.UID, src.UID, k.Digest())
	switch {
	case err != nil:
		return "", Approval{}, err
	case !ok || a.Version.Digest() != a.Digest:
		return ReasonNoApproval, Approval{}, nil
	case a.Revoked():
		return ReasonRevoked, Approval{}, nil
	}
	return "", a, nil
}

// Standing is whether k of src is in use as an instruction now: the
// instruction rule, and the skill's own switches (orphaned, disabled) first.
// The empty reason means it instructs.
func (s *Store) Standing(ctx context.Context, k Skill, src Source) (Reason, error) {
	switch {
	case k.Orphaned:
		return ReasonOrphaned, nil
	case !k.Enabled:
		return ReasonDisabled, nil
	}
	r, _, err := s.rule(ctx, k, src)
	return r, err
}

// Review is everything a reviewer is shown of one skill (GET /api/skills/{uid}
// and the web UI's skill page): the skill, its source, whether it
// instructs and why not, its approvals, the latest unrevoked approval of its
// current source and the line diff of the current SKILL.md against that
// snapshot (all "+" when nothing was approved yet), the edit history and the
// audit trail. Digest is the digest the diff was computed for — the one an
// approval from this review must name.
type Review struct {
	Skill        Skill
	Source       Source
	Instructs    bool   // the instruction rule alone (Instructs)
	Reason       Reason // Standing: "" when it instructs and is in use
	Approvals    []Approval
	LastApproved *Approval
	Diff         []DiffLine
	History      []HistoryEntry
	Audit        []AuditEntry
}

// Review reads the review of a skill; an unknown skill is ErrNotFound.
func (s *Store) Review(ctx context.Context, uid int64) (Review, error) {
	k, err := s.Get(ctx, uid)
	if err != nil {
		return Review{}, err
	}
	src, err := s.SourceGet(ctx, k.Source)
	if err != nil {
		return Review{}, fmt.Errorf("source of skill %d: %w", uid, err)
	}
	rv := Review{Skill: k, Source: src}
	ruled, _, err := s.rule(ctx, k, src)
	if err != nil {
		return Review{}, err
	}
	rv.Instructs = ruled == ""
	if rv.Reason, err = s.Standing(ctx, k, src); err != nil {
		return Review{}, err
	}
	if rv.Approvals, err = s.Approvals(ctx, uid); err != nil {
		return Review{}, err
	}
	if rv.History, err = s.History(ctx, uid); err != nil {
		return Review{}, err
	}
	if rv.Audit, err = s.Audit(ctx, uid); err != nil {
		return Review{}, err
	}
	old := ""
	for i := len(rv.Approvals) - 1; i >= 0; i-- {
		if a := rv.Approvals[i]; !a.Revoked() && a.Source == k.Source {
			rv.LastApproved = &a
			old = string(Render(a.Version))
			break
		}
	}
	rv.Diff = LineDiff(old, string(Render(k.Version)))
	return rv, nil
}
