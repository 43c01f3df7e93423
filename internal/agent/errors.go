package agent

import (
	"fmt"

	"waymark/internal/fault"
)

// Errors the runtime returns for requests it refuses; a run outcome is never
// an error. Each is documented where it is returned and carries its kind and
// wire code (package fault); httpapi answers by the kind.
var (
	// ErrInvalid wraps every malformed request.
	ErrInvalid = fault.Detailed(fault.Invalid, "bad_request", "invalid request")
	// ErrNotFound answers an unknown run and a run the caller may not see alike.
	ErrNotFound = fault.New(fault.NotFound, "not_found", "not found")
	// ErrNotWaiting: the run does not wait for this kind of decision (any more).
	ErrNotWaiting = fault.New(fault.Conflict, "not_waiting", "run is not waiting for this decision")
	// ErrStaleTurn: the decision names another turn than the one waiting.
	ErrStaleTurn = fault.New(fault.Conflict, "stale_turn", "the decision names another turn (stale turn digest)")
	// ErrPreviewChanged: the record changed since the preview was shown; the
	// run keeps waiting with the new preview.
	ErrPreviewChanged = fault.New(fault.Conflict, "preview_changed", "the preview changed since it was shown")
	// ErrSelfApproval: a four-eyes configuration needs someone else to
	// release (403 self_approval; was the overloaded second_approver_required).
	ErrSelfApproval = fault.New(fault.Forbidden, "self_approval", "a second person must release this run")
	// ErrNotPermitted: the caller may see the run but not take this decision.
	ErrNotPermitted = fault.New(fault.Forbidden, "forbidden", "not permitted")
	// ErrCorruptState: the stored suspended state cannot be read; the run is left as it is.
	ErrCorruptState = fault.New(fault.Conflict, "corrupt_state", "suspended state cannot be read")
	// ErrConfiguration: the configuration is unknown, inactive or not usable by the caller.
	ErrConfiguration = fault.New(fault.NotFound, "configuration_not_found", "configuration not found")
	// ErrBadInput: submitted input does not match the question's schema.
	ErrBadInput = fault.Detailed(fault.Invalid, "bad_input", "input does not match the question")
	// ErrTooManyRuns: the caller has Config.MaxOpenRuns runs queued or
	// waiting already; no run was made (Run, Enqueue).
	ErrTooManyRuns = fault.New(fault.TooMany, "too_many_runs", "too many runs queued or waiting for a decision; finish or cancel some first")
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}
