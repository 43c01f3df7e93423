package secret

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func newBox(t *testing.T, fill byte) *Box {
	t.Helper()
	b, err := New(bytes.Repeat([]byte{fill}, KeySize))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b
}

func TestSealOpenRoundTrip(t *testing.T) {
	t.Parallel()
	b := newBox(t, 1)
	for _, plain := range []string{"sk-live-abc123", "", strings.Repeat("ü", 500)} {
		sealed, err := b.Seal(plain)
		if err != nil {
			t.Fatalf("Seal: %v", err)
		}
		if !strings.HasPrefix(sealed, "v1:") {
			t.Errorf("Seal(%q) = %q, want prefix v1:", plain, sealed)
		}
		if plain != "" && strings.Contains(sealed, plain) {
			t.Errorf("Seal(%q) contains the plaintext", plain)
		}
		got, err := b.Open(sealed)
		if err != nil || got != plain {
			t.Errorf("Open(Seal(%q)) = %q, %v", plain, got, err)
		}
	}
}

func TestSealingTwiceGivesDifferentValues(t *testing.T) {
	t.Parallel()
	b := newBox(t, 1)
	x, _ := b.Seal("same")
	y, _ := b.Seal("same")
	if x == y {
		t.Errorf("two seals of one text are equal: %q", x)
	}
}

func TestOpenDetectsTampering(t *testing.T) {
	t.Parallel()
	b := newBox(t, 1)
	sealed, _ := b.Seal("sk-live-abc123")
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(sealed, "v1:"))
	for i := range raw { // flipping any byte — nonce, ciphertext or tag — is caught
		mod := bytes.Clone(raw)
		mod[i] ^= 0x01
		got, err := b.Open("v1:" + base64.StdEncoding.EncodeToString(mod))
		if !errors.Is(err, ErrUnsealFailed) || got != "" {
			t.Fatalf("Open(byte %d flipped) = %q, %v, want ErrUnsealFailed", i, got, err)
		}
	}
}

func TestOpenWithWrongKeyFails(t *testing.T) {
	t.Parallel()
	sealed, _ := newBox(t, 1).Seal("sk-live-abc123")
	got, err := newBox(t, 2).Open(sealed)
	if !errors.Is(err, ErrUnsealFailed) || got != "" {
		t.Errorf("Open with another key = %q, %v, want ErrUnsealFailed", got, err)
	}
	if strings.Contains(err.Error(), "sk-live") {
		t.Errorf("error %q names the plaintext", err)
	}
}

func TestOpenRejectsMalformedValues(t *testing.T) {
	t.Parallel()
	b := newBox(t, 1)
	for _, in := range []string{"", "sk-live-abc123", "v2:AAAA", "v1:not base64!", "v1:" + base64.StdEncoding.EncodeToString([]byte("short"))} {
		if _, err := b.Open(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("Open(%q) error = %v, want ErrMalformed", in, err)
		}
	}
}

func TestNewRejectsKeysOfWrongLength(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 16, 31, 33} {
		if _, err := New(make([]byte, n)); err == nil {
			t.Errorf("New(%d bytes) succeeded, want an error", n)
		}
	}
}
