package store_test

import (
	"errors"
	"testing"

	"waymark/internal/store"
)

func TestCheckTextRefusesNULAndBytesThatAreNotUTF8(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    string
		want string
	}{
		{"", ""},
		{"plain é漢\U0001F600 \uFFFD", ""},
		{`a\u0000b`, ""},
		{"a\x00b", "text contains a NUL byte or is not UTF-8: NUL byte at byte 1"},
		{"ok\xff", "text contains a NUL byte or is not UTF-8: not UTF-8 at byte 2"},
		{"\xed\xa0\x80", "text contains a NUL byte or is not UTF-8: not UTF-8 at byte 0"},
	} {
		err := store.CheckText(c.s)
		if c.want == "" {
			if err != nil {
				t.Errorf("CheckText(%q) = %v, want nil", c.s, err)
			}
			continue
		}
		if !errors.Is(err, store.ErrInvalidText) || err.Error() != c.want {
			t.Errorf("CheckText(%q) = %v, want %q wrapping ErrInvalidText", c.s, err, c.want)
		}
	}
}
