package run

import "fmt"

// Status is the lifecycle state of a run (DESIGN §5).
type Status string

// The run statuses. There is no separate "suspended" status: a suspended run
// is in one of the two waiting statuses.
const (
	StatusQueued             Status = "queued"
	StatusRunning            Status = "running"
	StatusWaitingForApproval Status = "waiting_for_approval"
	StatusWaitingForInput    Status = "waiting_for_input"
	StatusCompleted          Status = "completed"
	StatusFailed             Status = "failed"
	StatusCancelled          Status = "cancelled"
)

// Statuses lists every status in lifecycle order.
func Statuses() []Status {
	return []Status{StatusQueued, StatusRunning, StatusWaitingForApproval, StatusWaitingForInput,
		StatusCompleted, StatusFailed, StatusCancelled}
}

// Terminal reports whether s is completed, failed or cancelled. No
// transition leaves a terminal status.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// Waiting reports whether s waits for a human decision (approval or input).
func (s Status) Waiting() bool {
	return s == StatusWaitingForApproval || s == StatusWaitingForInput
}

// Valid reports whether s is one of the statuses.
func (s Status) Valid() bool {
	for _, v := range Statuses() {
		if s == v {
			return true
		}
	}
	return false
}

// ParseStatus parses a status name; an unknown name is an error wrapping ErrInvalid.
func ParseStatus(s string) (Status, error) {
	if st := Status(s); st.Valid() {
		return st, nil
	}
	return "", fmt.Errorf("%w: unknown run status %q", ErrInvalid, s)
}

// Reason says why a run ended (DESIGN §5). Status and reason are separate:
// an iteration cap settles completed with reason max_iterations.
type Reason string

// The termination reasons. "" means the run has not ended.
const (
	ReasonCompleted        Reason = "completed"
	ReasonMaxIterations    Reason = "max_iterations"
	ReasonBudgetExhausted  Reason = "budget_exhausted"
	ReasonPolicyDenied     Reason = "policy_denied"
	ReasonApprovalDenied   Reason = "approval_denied"
	ReasonProviderFailed   Reason = "provider_failed"
	ReasonCancelled        Reason = "cancelled"
	ReasonRetriesExhausted Reason = "retries_exhausted"
	ReasonNotRetryable     Reason = "not_retryable"
	ReasonContextTruncated Reason = "context_truncated"
	ReasonProcessEnded     Reason = "process_ended"
)

// Reasons lists every termination reason.
func Reasons() []Reason {
	return []Reason{ReasonCompleted, ReasonMaxIterations, ReasonBudgetExhausted, ReasonPolicyDenied,
		ReasonApprovalDenied, ReasonProviderFailed, ReasonCancelled, ReasonRetriesExhausted,
		ReasonNotRetryable, ReasonContextTruncated, ReasonProcessEnded}
}

// Valid reports whether r is one of the reasons ("" is not).
func (r Reason) Valid() bool {
	for _, v := range Reasons() {
		if r == v {
			return true
		}
	}
	return false
}

// Retryable reports whether a run that failed for r may be retried: only
// provider_failed is.
func (r Reason) Retryable() bool { return r == ReasonProviderFailed }

// ParseReason parses a reason name; an unknown name is an error wrapping ErrInvalid.
func ParseReason(s string) (Reason, error) {
	if r := Reason(s); r.Valid() {
		return r, nil
	}
	return "", fmt.Errorf("%w: unknown termination reason %q", ErrInvalid, s)
}
