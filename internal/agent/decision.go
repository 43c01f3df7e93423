package agent

import (
	"unicode/utf8"

	"waymark/internal/store"
	"waymark/internal/tool"
)

// DenyReason is why a proposal was declined; the model receives it as a fixed token.
type DenyReason string

// The denial reasons of the card answers.
const (
	DenyVariant DenyReason = "variant" // propose another wording
	DenySkip    DenyReason = "skip"    // not now: move on
	DenyKeep    DenyReason = "keep"    // the current content stays: move on
)

// MaxInstruction is the longest instruction of a variant, in characters.
const MaxInstruction = 500

// Decision answers a waiting approval.
type Decision struct {
	Approve    bool       `json:"approve"`
	TurnDigest string     `json:"turnDigest"`
	Reason     DenyReason `json:"reason,omitempty"`
	// Instruction is the editor's wish for the variant ("kürzer"): the
	// model receives it with the variant's denial. Only a variant takes one.
	Instruction string `json:"instruction,omitempty"`
}

func (d Decision) validate() error {
	switch d.Reason {
	case "", DenyVariant, DenySkip, DenyKeep:
	default:
		return invalidf("reason: want variant, skip or keep, got %q", d.Reason)
	}
	if d.Approve && d.Reason != "" {
		return invalidf("reason: only a denial carries a reason")
	}
	if err := store.CheckText(d.Instruction); err != nil {
		return store.ErrInvalidText.With("instruction: %w", err)
	}
	if utf8.RuneCountInString(d.Instruction) > MaxInstruction {
		return invalidf("instruction: at most %d characters", MaxInstruction)
	}
	if d.Instruction != "" && d.Reason != DenyVariant {
		return invalidf("instruction: only a variant takes one")
	}
	if d.TurnDigest == "" {
		return invalidf("turnDigest: required")
	}
	return nil
}

// decided is how the runtime answered the calls of the decided turn, in
// the card's order.
func decided(seg *segment, calls []pendingCall) []CallResult {
	out := []CallResult{}
	for _, c := range calls {
		if r, ok := seg.answered[c.ID]; ok {
			out = append(out, r)
		}
	}
	return out
}

// denial is the tool result a declined call gets: a fixed token the model
// can rely on. A variant's instruction comes beside it, marked as the
// editor's wish for the next proposal.
func denial(decidedBy string, reason DenyReason, instruction string) tool.Result {
	c := map[string]string{"error": "approval_denied", "decided_by": decidedBy}
	if reason != "" {
		c["reason"] = string(reason)
	}
	if reason == DenyVariant && instruction != "" {
		c["editor_wish_for_variant"] = instruction
	}
	return tool.Result{Content: c, IsError: true}
}
