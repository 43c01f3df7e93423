package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// cost is the bcrypt work factor for new hashes: 10 in production, the
// minimum inside test binaries (a check reads the cost from the stored hash,
// so hashes made either way verify alike).
func cost() int {
	if testing.Testing() {
		return bcrypt.MinCost
	}
	return 10
}

// HashPassword returns the bcrypt hash of a password.
func HashPassword(password string) (string, error) {
	if password == "" {
		return "", errors.New("empty password")
	}
	if len(password) > 72 {
		return "", errors.New("password longer than 72 bytes")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost())
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// CheckPassword reports whether password matches hash.
func CheckPassword(hash, password string) bool {
	return hash != "" && bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

// TokenLookup is the short, non-secret prefix of sha256(token) under which a
// token's row is found; the bcrypt hash then proves the token.
func TokenLookup(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:4])
}

// HashToken returns the lookup key and the bcrypt hash to store for a token.
// Tokens of up to 72 bytes are accepted; a longer one is pre-hashed with sha256.
func HashToken(token string) (lookup, hash string, err error) {
	return HashTokenCost(token, 0)
}

// HashTokenCost is HashToken at bcrypt work factor c (0: the default). A
// check reads the cost from the stored hash, so any cost verifies.
func HashTokenCost(token string, c int) (lookup, hash string, err error) {
	if len(token) < 8 {
		return "", "", errors.New("token shorter than 8 characters")
	}
	if c == 0 {
		c = cost()
	}
	h, err := bcrypt.GenerateFromPassword(tokenKey(token), c)
	if err != nil {
		return "", "", fmt.Errorf("hash token: %w", err)
	}
	return TokenLookup(token), string(h), nil
}

// CheckToken reports whether token matches a stored hash.
func CheckToken(hash, token string) bool {
	return bcrypt.CompareHashAndPassword([]byte(hash), tokenKey(token)) == nil
}

func tokenKey(token string) []byte {
	if len(token) <= 72 {
		return []byte(token)
	}
	sum := sha256.Sum256([]byte(token))
	return []byte(hex.EncodeToString(sum[:]))
}
