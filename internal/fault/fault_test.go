package fault_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"waymark/internal/fault"
)

var (
	errWaiting = fault.New(fault.Conflict, "test_not_waiting", "run is not waiting")
	errBad     = fault.Detailed(fault.Invalid, "test_bad_request", "invalid request")
)

func TestWrappedSentinelKeepsKindCodeAndMessage(t *testing.T) {
	err := fmt.Errorf("decide run 7: %w", errWaiting)
	f, msg, ok := fault.Of(err)
	if !ok || f.Kind() != fault.Conflict || f.Code() != "test_not_waiting" || msg != "run is not waiting" {
		t.Fatalf("Of = %v %q %v, want conflict test_not_waiting with the sentinel's message", f, msg, ok)
	}
	if !errors.Is(err, errWaiting) {
		t.Error("errors.Is does not find the sentinel through %w")
	}
}

func TestDetailedSentinelSendsTheWholeText(t *testing.T) {
	err := fmt.Errorf("%w: limit: want 1 to 200", errBad)
	if _, msg, _ := fault.Of(err); msg != "invalid request: limit: want 1 to 200" {
		t.Errorf("message = %q, want the whole text", msg)
	}
}

func TestWithCarriesDetailAndMatchesItsSentinel(t *testing.T) {
	cause := errors.New("disk on fire")
	err := fmt.Errorf("outer: %w", errWaiting.With("turn %d: %w", 3, cause))
	f, msg, _ := fault.Of(err)
	if f.Code() != "test_not_waiting" || msg != "turn 3: disk on fire" {
		t.Errorf("Of = %s %q", f.Code(), msg)
	}
	if !errors.Is(err, errWaiting) || !errors.Is(err, cause) {
		t.Error("derived error does not match its sentinel and its cause")
	}
	if err.Error() != "outer: turn 3: disk on fire" {
		t.Errorf("Error() = %q, want the cause once", err)
	}
	if errors.Is(err, errBad) {
		t.Error("derived error matches another sentinel")
	}
}

func TestWrapLogsTheCauseButSendsTheMessage(t *testing.T) {
	cause := errors.New("connection refused")
	err := errWaiting.Wrap(cause)
	if _, msg, _ := fault.Of(err); msg != "run is not waiting" {
		t.Errorf("message = %q, want the sentinel's (the cause is never sent)", msg)
	}
	if !strings.Contains(err.Error(), "connection refused") || !errors.Is(err, cause) || !errors.Is(err, errWaiting) {
		t.Errorf("Error() = %q, want the cause logged and matched", err)
	}
}

func TestUnfaultedErrorIsInternal(t *testing.T) {
	err := fmt.Errorf("query: %w", errors.New("sql: database is closed"))
	if _, _, ok := fault.Of(err); ok || fault.KindOf(err) != fault.Internal || fault.CodeOf(err) != "internal" {
		t.Errorf("an error without a fault is not internal")
	}
}

type refusal struct{ denied bool }

var errDenied = fault.New(fault.Forbidden, "test_forbidden", "denied")

func (r *refusal) Error() string { return "refused" }
func (r *refusal) Fault() *fault.Error {
	if r.denied {
		return errDenied
	}
	return errWaiting.With("refused: %s", "stale")
}

func TestTypedErrorChoosesItsFault(t *testing.T) {
	if f, _, _ := fault.Of(fmt.Errorf("x: %w", &refusal{denied: true})); f.Kind() != fault.Forbidden {
		t.Errorf("kind = %s, want forbidden", f.Kind())
	}
	if f, msg, _ := fault.Of(&refusal{}); f.Code() != "test_not_waiting" || msg != "refused: stale" {
		t.Errorf("Of = %s %q", f.Code(), msg)
	}
}

func TestOneCodeHasOneKind(t *testing.T) {
	fault.New(fault.NotFound, "test_same", "a")
	fault.New(fault.NotFound, "test_same", "b") // same kind: allowed
	defer func() {
		if recover() == nil {
			t.Error("a code declared with a second kind did not panic")
		}
	}()
	fault.New(fault.Conflict, "test_same", "c")
}

func TestCodesListsDeclarations(t *testing.T) {
	m := fault.Codes()
	if m["test_not_waiting"] != fault.Conflict || m["test_bad_request"] != fault.Invalid || m["internal"] != fault.Internal {
		t.Errorf("Codes() = %v", m)
	}
}

// A refusal recorded as code and message by a queue job is
// answered as the refusal it was.
func TestRebuildGivesTheDeclaredKindOfACode(t *testing.T) {
	err := fault.Rebuild("test_not_waiting", "run is not waiting")
	f, msg, ok := fault.Of(err)
	if !ok || f.Kind() != fault.Conflict || f.Code() != "test_not_waiting" || msg != "run is not waiting" {
		t.Fatalf("Rebuild = %v %q %v, want conflict test_not_waiting with its message", f, msg, ok)
	}
	detail := fault.Rebuild("test_bad_request", "invalid request: limit: want 1 to 200")
	if _, msg, _ := fault.Of(detail); msg != "invalid request: limit: want 1 to 200" {
		t.Errorf("rebuilt detailed message = %q, want it as recorded", msg)
	}
	if f := fault.Rebuild("no_such_code", "whatever"); f.Kind() != fault.Internal || f.Code() != "internal" {
		t.Errorf("Rebuild of an undeclared code = %s %s, want internal", f.Kind(), f.Code())
	}
}
