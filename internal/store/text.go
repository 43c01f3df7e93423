package store

import (
	"fmt"
	"strings"
	"unicode/utf8"
	"waymark/internal/fault"
)

// ErrInvalidText is returned by CheckText for text a database of either
// dialect cannot store alike: PostgreSQL refuses a NUL byte and bytes that
// are not UTF-8 in text columns, while SQLite would keep them. Refusing such
// text before it reaches either database keeps one rule on both.
var ErrInvalidText = fault.New(fault.Invalid, "invalid_text", "text contains a NUL byte or is not UTF-8")

// CheckText returns an error wrapping ErrInvalidText when s contains a NUL
// byte or is not valid UTF-8; the message says which and at which byte, never
// repeating s.
func CheckText(s string) error {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return fmt.Errorf("%w: NUL byte at byte %d", ErrInvalidText, i)
	}
	if !utf8.ValidString(s) {
		for i, r := range s {
			if r == utf8.RuneError {
				if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
					return fmt.Errorf("%w: not UTF-8 at byte %d", ErrInvalidText, i)
				}
			}
		}
		return fmt.Errorf("%w: not UTF-8", ErrInvalidText)
	}
	return nil
}

// Storable returns s with NUL bytes dropped and bytes that are not UTF-8
// replaced by U+FFFD: text from outside that must be kept rather than
// refused (a model's answer) is stored alike on both databases.
func Storable(s string) string {
	if CheckText(s) == nil {
		return s
	}
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
}
