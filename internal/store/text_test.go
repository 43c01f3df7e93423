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

func TestStorableDropsNULAndReplacesBytesThatAreNotUTF8(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"plain é": "plain é", "Hallo\x00 Welt": "Hallo Welt", "a\xffb": "a\uFFFDb", "\x00\x00": ""} {
		if got := store.Storable(in); got != want || store.CheckText(got) != nil {
			t.Errorf("Storable(%q) = %q, want %q", in, got, want)
		}
	}
}
