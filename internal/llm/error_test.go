package llm

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestErrorSaysKindStatusAttemptsAndCause(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  *Error
		want string
	}{
		{&Error{Kind: KindRetryable, Status: 503, Attempts: 4, Err: errors.New("overloaded")}, "llm: retryable (HTTP 503) after 4 attempts: overloaded"},
		{&Error{Kind: KindNotRetryable, Status: 400, Attempts: 1, Err: errors.New("bad model")}, "llm: not_retryable (HTTP 400): bad model"},
		{&Error{Kind: KindBadResponse, Err: errors.New("no choices")}, "llm: bad_response: no choices"},
		{&Error{Kind: Kind(9)}, "llm: kind(9)"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

func TestIsRetryableOnlyForRetryableKind(t *testing.T) {
	t.Parallel()
	cause := errors.New("reset")
	retryable := &Error{Kind: KindRetryable, Err: cause}
	cases := []struct {
		err  error
		want bool
	}{
		{retryable, true},
		{fmt.Errorf("turn 3: %w", retryable), true},
		{&Error{Kind: KindNotRetryable}, false},
		{&Error{Kind: KindBadResponse}, false},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{nil, false},
	}
	for _, c := range cases {
		if got := IsRetryable(c.err); got != c.want {
			t.Errorf("IsRetryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	if !errors.Is(retryable, cause) {
		t.Error("errors.Is(Error, cause) = false, want Unwrap to reach the cause")
	}
}
