package agent

import (
	"errors"
	"fmt"
)

// Errors the runtime returns for requests it refuses; a run outcome is never
// an error. Each is documented where it is returned.
var (
	// ErrInvalid wraps every malformed request.
	ErrInvalid = errors.New("invalid request")
	// ErrNotFound answers an unknown run and a run the caller may not see alike.
	ErrNotFound = errors.New("not found")
	// ErrNotWaiting: the run does not wait for this kind of decision (any more).
	ErrNotWaiting = errors.New("run is not waiting for this decision")
	// ErrStaleTurn: the decision names another turn than the one waiting.
	ErrStaleTurn = errors.New("the decision names another turn (stale turn digest)")
	// ErrPreviewChanged: the record changed since the preview was shown; the
	// run keeps waiting with the new preview.
	ErrPreviewChanged = errors.New("the preview changed since it was shown")
	// ErrSelfApproval: a four-eyes configuration needs someone else to release.
	ErrSelfApproval = errors.New("a second person must release this run")
	// ErrNotPermitted: the caller may see the run but not take this decision.
	ErrNotPermitted = errors.New("not permitted")
	// ErrCorruptState: the stored suspended state cannot be read; the run is left as it is.
	ErrCorruptState = errors.New("suspended state cannot be read")
	// ErrConfiguration: the configuration is unknown, inactive or not usable by the caller.
	ErrConfiguration = errors.New("configuration not found")
	// ErrBadInput: submitted input does not match the question's schema.
	ErrBadInput = errors.New("input does not match the question")
	// ErrTooManyRuns: the caller has Config.MaxOpenRuns runs queued or
	// waiting already; no run was made (Run, Enqueue).
	ErrTooManyRuns = errors.New("too many runs queued or waiting for a decision; finish or cancel some first")
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}
