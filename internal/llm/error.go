package llm

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies a provider failure.
type Kind int

// The kinds of provider failure.
const (
	// KindRetryable: the same request may succeed later (HTTP 429 and 5xx,
	// network errors, timeouts, a stream dropped mid-reply).
	KindRetryable Kind = iota + 1
	// KindNotRetryable: the request itself was refused (other 4xx, an invalid
	// request); sending it again gives the same answer.
	KindNotRetryable
	// KindBadResponse: the server answered with something unusable (an
	// unparsable body, no choices, tool arguments that are not a JSON object).
	// Not retryable.
	KindBadResponse
)

// String returns the kind as a word: retryable, not_retryable, bad_response.
func (k Kind) String() string {
	switch k {
	case KindRetryable:
		return "retryable"
	case KindNotRetryable:
		return "not_retryable"
	case KindBadResponse:
		return "bad_response"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Error is a classified provider failure. Status is the HTTP status when
// there was one; RetryAfter the wait the server asked for; Attempts how many
// calls the provider made before giving up (0 when unknown). Err never holds
// credentials.
type Error struct {
	Kind       Kind
	Status     int
	RetryAfter time.Duration
	Attempts   int
	Err        error
}

// Error describes the failure, e.g. "llm: retryable (HTTP 503): overloaded".
func (e *Error) Error() string {
	msg := "llm: " + e.Kind.String()
	if e.Status != 0 {
		msg += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Attempts > 1 {
		msg += fmt.Sprintf(" after %d attempts", e.Attempts)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// IsRetryable reports whether err is an *Error of KindRetryable.
// Context cancellation is not retryable.
func IsRetryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == KindRetryable
}
