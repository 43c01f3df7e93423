package skill

import (
	"errors"
	"fmt"
)

// ErrNotFound is wrapped by errors about a skill, source or attachment that
// does not exist, and by Catalogue for a configuration the actor may not use
// (unknown and forbidden answer alike).
var ErrNotFound = errors.New("not found")

// ErrInvalid is wrapped by every *InvalidError. A call that returns it
// changed nothing.
var ErrInvalid = errors.New("invalid skill input")

// ErrSourceUnreadable is wrapped by Sync when the source's folder is missing,
// not a folder or cannot be listed. Sync then changes nothing.
var ErrSourceUnreadable = errors.New("skill source folder unreadable")

// InvalidError is bad input: Field names what is wrong (for example
// "allowed-tools", "identifier", "trust"), Msg says why.
type InvalidError struct {
	Field string
	Msg   string
}

func (e *InvalidError) Error() string { return e.Field + ": " + e.Msg }

// Is makes errors.Is(err, ErrInvalid) hold.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Refusal is why Approve or Revoke refused. The list is closed and append-only.
type Refusal string

// The refusals of Approve and Revoke.
const (
	// RefusedDenied: the actor is not an administrator and holds no skill_approve grant.
	RefusedDenied Refusal = "denied"
	// RefusedStale: the digest the approver saw is not the skill's current digest.
	RefusedStale Refusal = "stale_digest"
	// RefusedOrphaned: the skill disappeared from its source.
	RefusedOrphaned Refusal = "orphaned"
	// RefusedUnknownDigest: a revocation names a digest that was never approved for the skill.
	RefusedUnknownDigest Refusal = "unknown_digest"
)

// RefusedError is a refused approval or revocation. Every refusal of a
// known skill is audited before it is returned; nothing else changes.
type RefusedError struct {
	Op     string // "approve" or "revoke"
	Skill  int64
	Actor  int64
	Digest string // the digest the request named
	Case   Refusal
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s skill %d digest %s refused: %s", e.Op, e.Skill, e.Digest, e.Case)
}
