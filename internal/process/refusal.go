package process

import "fmt"

// Refusal is the case of a refused invocation or continuation. The list is
// closed and append-only; the order of the checks is the spec's (item 2).
type Refusal string

// The refusal cases, in the order the preparer checks them.
const (
	ConfigurationDenied    Refusal = "configuration_denied"     // (a) the actor may not use the configuration
	LineageUnreadable      Refusal = "lineage_unreadable"       // (b) the predecessor's lineage cannot be read or stored
	PredecessorNotFinished Refusal = "predecessor_not_finished" // (b) a predecessor holding a process is not terminal
	ProcessHeld            Refusal = "process_held"             // (c) another skill while a process is held
	SkillUnavailable       Refusal = "skill_unavailable"        // (d) not attached, enabled, non-orphaned, admitted
	NotAProcess            Refusal = "not_a_process"            // (e) the current version is no approved process instruction
	ServiceAccount         Refusal = "service_account"          // (f) the actor is a service account
	SecondApproverRequired Refusal = "second_approver_required" // (f) the configuration sets requireSecondApprover
	SubjectDenied          Refusal = "subject_denied"           // (g) the acting user may not read the subject
	PinWithdrawn           Refusal = "pin_withdrawn"            // (h) a derived pin no longer holds
	NoPreparer             Refusal = "no_preparer"              // the executor has no preparer
	RequestUnreadable      Refusal = "request_unreadable"       // the stored request of a queued run cannot be decoded (item 1)
)

// RefusedError is a refused invocation or continuation. It settles the run
// failed with reason policy_denied — or approval_denied for a continued
// process on a configuration that turned four-eyes on since.
type RefusedError struct {
	Case Refusal
	// ApprovalDenied marks the continued process on a configuration that
	// turned four-eyes on since (settled approval_denied, as on resume).
	ApprovalDenied bool
	Detail         string
}

func (e *RefusedError) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("process invocation refused: %s: %s", e.Case, e.Detail)
	}
	return "process invocation refused: " + string(e.Case)
}

// RefusalCase names the case (the runtime reads it through an interface).
func (e *RefusedError) RefusalCase() string { return string(e.Case) }

// SecondApproverDenied reports the approval_denied settle.
func (e *RefusedError) SecondApproverDenied() bool { return e.ApprovalDenied }
