package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the length of a key in bytes (AES-256).
const KeySize = 32

// prefix marks the format of a sealed value: "v1:" + base64(nonce | ciphertext+tag).
const prefix = "v1:"

// Errors returned by Open. Neither names the plaintext or the key.
var (
	// ErrMalformed: the value is not a sealed value of a known format.
	ErrMalformed = errors.New("sealed value is malformed")
	// ErrUnsealFailed: the value was sealed with another key, or was altered.
	ErrUnsealFailed = errors.New("sealed value does not open: wrong key or altered value")
)

// Box seals and opens strings with one key. It is safe for concurrent use.
type Box struct {
	aead cipher.AEAD
}

// New returns a Box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secret key: want %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext with a fresh random nonce and returns
// "v1:" + base64(nonce | ciphertext). Sealing the same text twice gives
// different values.
func (b *Box) Seal(plaintext string) (string, error) {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plaintext)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: nonce: %w", err)
	}
	out := b.aead.Seal(nonce, nonce, []byte(plaintext), nil)
	return prefix + base64.StdEncoding.EncodeToString(out), nil
}

// Open decrypts a value made by Seal. It returns ErrMalformed for a value of
// an unknown format and ErrUnsealFailed for a wrong key or an altered value.
func (b *Box) Open(sealed string) (string, error) {
	rest, ok := strings.CutPrefix(sealed, prefix)
	if !ok {
		return "", ErrMalformed
	}
	raw, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(raw) < b.aead.NonceSize()+b.aead.Overhead() {
		return "", ErrMalformed
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], nil)
	if err != nil {
		return "", ErrUnsealFailed
	}
	return string(plain), nil
}
