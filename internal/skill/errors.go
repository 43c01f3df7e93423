package skill

import (
	"fmt"

	"waymark/internal/fault"
)

// ErrNotFound is wrapped by errors about a skill, source or attachment that
// does not exist, and by Catalogue for a configuration the actor may not use
// (unknown and forbidden answer alike). Its wrappers name only what the
// request named (uids), so the client sees their whole text.
var ErrNotFound = fault.Detailed(fault.NotFound, "not_found", "not found")

// ErrInvalid is wrapped by every *InvalidError and matched by every
// *ParseError (400 invalid_skill). A call that returns it changed nothing.
var ErrInvalid = fault.Detailed(fault.Invalid, "invalid_skill", "invalid skill input")

// ErrSourceUnreadable is wrapped by Sync when the source's folder is missing,
// not a folder or cannot be listed. Sync then changes nothing (422).
var ErrSourceUnreadable = fault.New(fault.Unprocessable, "source_unreadable",
	"the skill source's folder is missing or unreadable; nothing changed")

// InvalidError is bad input: Field names what is wrong (for example
// "allowed-tools", "identifier", "trust"), Msg says why.
type InvalidError struct {
	Field string
	Msg   string
}

func (e *InvalidError) Error() string { return e.Field + ": " + e.Msg }

// Is makes errors.Is(err, ErrInvalid) hold.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// Fault is ErrInvalid: the client sees the whole text, which names the field.
func (e *InvalidError) Fault() *fault.Error { return ErrInvalid }

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

// refusedFaults are the wire faults of the refusals: a stale or orphaned
// approval is a conflict named by its case, an unknown digest is 404, a
// denied actor 403 forbidden.
var refusedFaults = map[Refusal]*fault.Error{
	RefusedDenied:        fault.New(fault.Forbidden, "forbidden", "only administrators and skill approvers may approve or revoke skills"),
	RefusedStale:         fault.New(fault.Conflict, string(RefusedStale), "stale digest"),
	RefusedOrphaned:      fault.New(fault.Conflict, string(RefusedOrphaned), "orphaned skill"),
	RefusedUnknownDigest: fault.New(fault.NotFound, string(RefusedUnknownDigest), "unknown digest"),
}

// Fault is the refusal's wire fault; the message names the request (skill
// and digest), except for a denied actor.
func (e *RefusedError) Fault() *fault.Error {
	f, ok := refusedFaults[e.Case]
	if !ok {
		return nil // an undeclared case is internal
	}
	if e.Case == RefusedDenied {
		return f
	}
	return f.With("%s", e.Error())
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s skill %d digest %s refused: %s", e.Op, e.Skill, e.Digest, e.Case)
}
