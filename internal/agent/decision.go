package agent

import (
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

// Decision answers a waiting approval.
type Decision struct {
	Approve    bool       `json:"approve"`
	TurnDigest string     `json:"turnDigest"`
	Reason     DenyReason `json:"reason,omitempty"`
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

// denial is the tool result a declined call gets: a fixed token the model can rely on.
func denial(decidedBy string, reason DenyReason) tool.Result {
	c := map[string]string{"error": "approval_denied", "decided_by": decidedBy}
	if reason != "" {
		c["reason"] = string(reason)
	}
	return tool.Result{Content: c, IsError: true}
}
