// Package fault is the one error model of Waymark: an
// error that says what kind of failure it is and carries the stable wire
// code and the safe message a client sees. Domain packages declare their
// sentinels with New or Detailed; httpapi maps a Kind to an HTTP status in
// one place and never looks at a domain's sentinels.
//
// Every declaration registers its code (Codes lists them); a code has one
// kind wherever it is declared, so a code means one thing (New panics at
// init on a second kind). An error that carries no fault is Internal: the
// client learns nothing of it, the log has it.
//
// The package imports only the standard library, so every package can use it.
package fault

import (
	"errors"
	"fmt"
	"sort"
	"sync"
)

// Kind is what kind of failure an error is. The list is closed and
// append-only: a new kind needs a status in httpapi and a line in docs/API.md.
type Kind uint8

// The kinds. The zero Kind is Internal, so a forgotten kind fails closed.
const (
	// Internal: a failure of the server or its infrastructure; never a domain answer.
	Internal Kind = iota
	// Invalid: the request is malformed or names bad input; nothing changed (400).
	Invalid
	// Unauthenticated: no or wrong credentials (401).
	Unauthenticated
	// Forbidden: the caller is known but may not do this (403).
	Forbidden
	// NotFound: the object does not exist, or the caller may not see it —
	// "private" answers like "unknown" so existence never leaks (404).
	NotFound
	// MethodNotAllowed: the route exists for other methods (405).
	MethodNotAllowed
	// NotAcceptable: the connection cannot give the answer asked for, e.g. a stream (406).
	NotAcceptable
	// Conflict: the request is valid but the state of what it names refuses it (409).
	Conflict
	// TooLarge: the request body is too large (413).
	TooLarge
	// Unprocessable: what the request names cannot be used as it is, e.g. an unreadable skill source (422).
	Unprocessable
	// TooMany: a limit on requests, attempts or open objects is reached (429).
	TooMany
	// Unavailable: the server cannot answer now (503, e.g. the database is unreachable).
	Unavailable
)

var kindNames = [...]string{"internal", "invalid", "unauthenticated", "forbidden", "not_found",
	"method_not_allowed", "not_acceptable", "conflict", "too_large", "unprocessable", "too_many", "unavailable"}

// Kinds lists every kind, in declaration order.
func Kinds() []Kind {
	ks := make([]Kind, len(kindNames))
	for i := range ks {
		ks[i] = Kind(i)
	}
	return ks
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Error is an error with a kind, a wire code and a safe message. Declared
// errors (New, Detailed) are sentinels compared with errors.Is; With and
// Wrap derive errors that still match their sentinel.
type Error struct {
	kind     Kind
	code     string
	msg      string
	detailed bool   // a sentinel whose wrappers add the client's detail (Detailed)
	of       *Error // the sentinel this error derives from; nil for a sentinel
	cause    error  // logged; sent only when With put it in the message
	inMsg    bool   // the message holds the cause's text (With and %w)
}

// New declares a sentinel: kind, snake_case wire code and the one-line
// message the client sees whatever wraps it.
func New(kind Kind, code, msg string) *Error {
	register(code, kind)
	return &Error{kind: kind, code: code, msg: msg}
}

// Detailed declares a sentinel its package wraps with detail safe to show,
// fmt.Errorf("%w: limit: want 1 to 200", ErrInvalid): the client sees the
// whole text of the error that wraps it. Only for bad input, whose detail
// names what the request named.
func Detailed(kind Kind, code, msg string) *Error {
	e := New(kind, code, msg)
	e.detailed = true
	return e
}

// With derives an error of e's kind and code whose client message is the
// formatted detail; errors.Is(derived, e) holds. A %w verb in format makes
// its operand the cause as well.
func (e *Error) With(format string, args ...any) *Error {
	d := fmt.Errorf(format, args...)
	cause := errors.Unwrap(d)
	return &Error{kind: e.kind, code: e.code, msg: d.Error(), of: e.root(), cause: cause, inMsg: cause != nil}
}

// Wrap derives an error with e's kind, code and message whose cause is
// cause: the cause is logged and never sent. errors.Is(derived, e) and
// errors.Is(derived, cause) hold.
func (e *Error) Wrap(cause error) *Error {
	return &Error{kind: e.kind, code: e.code, msg: e.msg, detailed: e.detailed, of: e.root(), cause: cause}
}

func (e *Error) root() *Error {
	if e.of != nil {
		return e.of
	}
	return e
}

// Kind is the error's kind.
func (e *Error) Kind() Kind { return e.kind }

// Code is the wire code, e.g. "not_waiting".
func (e *Error) Code() string { return e.code }

// Message is the one line the client sees.
func (e *Error) Message() string { return e.msg }

// Error is the message, followed by the cause when there is one.
func (e *Error) Error() string {
	if e.cause != nil && !e.inMsg {
		return e.msg + ": " + e.cause.Error()
	}
	return e.msg
}

// Unwrap returns the sentinel the error derives from and its cause.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.of != nil {
		errs = append(errs, e.of)
	}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

// Fault returns e (every *Error is a Faulter).
func (e *Error) Fault() *Error { return e }

// A Faulter is an error that says which fault it is: *Error, and typed
// errors of the domains (a refusal with a closed case list, a field error)
// that choose their fault from their fields.
type Faulter interface {
	error
	Fault() *Error
}

// Of returns the fault of err — the outermost Faulter in its chain — and
// the message the client sees: the fault's message, or the whole text of
// err for a Detailed sentinel. ok is false when err carries no fault; err
// is then Internal.
func Of(err error) (f *Error, msg string, ok bool) {
	var fl Faulter
	if !errors.As(err, &fl) {
		return nil, "", false
	}
	f = fl.Fault()
	if f == nil {
		return nil, "", false
	}
	if f.detailed {
		return f, err.Error(), true
	}
	return f, f.msg, true
}

// KindOf is the kind of err: Internal when it carries no fault.
func KindOf(err error) Kind {
	if f, _, ok := Of(err); ok {
		return f.kind
	}
	return Internal
}

// CodeOf is the wire code of err: "internal" when it carries no fault.
func CodeOf(err error) string {
	if f, _, ok := Of(err); ok {
		return f.code
	}
	return "internal"
}

var (
	mu    sync.Mutex
	codes = map[string]Kind{"internal": Internal}
)

func register(code string, kind Kind) {
	if code == "" {
		panic("fault: empty code")
	}
	mu.Lock()
	defer mu.Unlock()
	if k, ok := codes[code]; ok && k != kind {
		panic(fmt.Sprintf("fault: code %q declared as %s and as %s; one code means one thing", code, k, kind))
	}
	codes[code] = kind
}

// Codes is every declared wire code with its kind: the one list of codes the
// server can send (checked against docs/API.md by httpapi's tests). It holds
// the declarations of the packages linked into the program.
func Codes() map[string]Kind {
	mu.Lock()
	defer mu.Unlock()
	m := make(map[string]Kind, len(codes))
	for c, k := range codes {
		m[c] = k
	}
	return m
}

// SortedCodes is Codes' keys in order.
func SortedCodes() []string {
	m := Codes()
	cs := make([]string, 0, len(m))
	for c := range m {
		cs = append(cs, c)
	}
	sort.Strings(cs)
	return cs
}

// Rebuild makes an error again of a fault carried as data — a wire code and
// the message the client saw, e.g. the outcome a queue job recorded for the
// request that waits for it: the error has the kind code
// was declared with, the code and msg as its client message. An undeclared
// code is Internal, so it fails closed. The error matches no sentinel
// (several sentinels may share a code): callers answer it, they do not
// branch on it.
func Rebuild(code, msg string) *Error {
	mu.Lock()
	kind, ok := codes[code]
	mu.Unlock()
	if !ok {
		kind, code = Internal, "internal"
	}
	return &Error{kind: kind, code: code, msg: msg}
}
