package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"golang.org/x/crypto/bcrypt"

	"waymark/internal/fault"
)

// DefaultCost is the bcrypt work factor of new password and token hashes in
// production; a cost of 0 anywhere in this package means it.
const DefaultCost = 10

// MinCost is bcrypt's minimum work factor, for the hashes of tests and of
// throwaway credentials (`waymark bench`'s generated editors). The wiring
// chooses the cost (app.Config.HashCost); the package never guesses it from
// its surroundings (production code does not import testing).
const MinCost = bcrypt.MinCost

// CheckCost returns an error for a work factor that is neither 0 (DefaultCost)
// nor within bcrypt's range: bcrypt itself would take one below its minimum
// silently as its default.
func CheckCost(cost int) error {
	if cost != 0 && (cost < bcrypt.MinCost || cost > bcrypt.MaxCost) {
		return fmt.Errorf("bcrypt cost %d: want 0 (default %d) or %d-%d", cost, DefaultCost, bcrypt.MinCost, bcrypt.MaxCost)
	}
	return nil
}

// costOr is cost, or DefaultCost for 0.
func costOr(cost int) (int, error) {
	if err := CheckCost(cost); err != nil {
		return 0, err
	}
	if cost == 0 {
		return DefaultCost, nil
	}
	return cost, nil
}

// MaxPasswordBytes is the longest password accepted: bcrypt reads only the
// first 72 bytes, so a longer one would match on its prefix.
const MaxPasswordBytes = 72

// ErrPasswordTooLong answers a login with a password longer than
// MaxPasswordBytes; no password that long is ever set.
var ErrPasswordTooLong = fault.New(fault.Invalid, "password_too_long", "passwords are at most 72 bytes long")

// HashPassword returns the bcrypt hash of a password at work factor cost (0:
// DefaultCost). A check reads the cost from the stored hash, so a hash of any
// cost verifies.
func HashPassword(password string, cost int) (string, error) {
	if password == "" {
		return "", errors.New("empty password")
	}
	if len(password) > MaxPasswordBytes {
		return "", errors.New("password longer than 72 bytes")
	}
	c, err := costOr(cost)
	if err != nil {
		return "", err
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), c)
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

// HashToken returns the lookup key and the bcrypt hash to store for a token,
// at work factor cost (0: DefaultCost; a check reads the cost from the stored
// hash, so any cost verifies). Tokens of up to 72 bytes are accepted; a
// longer one is pre-hashed with sha256.
func HashToken(token string, cost int) (lookup, hash string, err error) {
	if len(token) < 8 {
		return "", "", errors.New("token shorter than 8 characters")
	}
	c, err := costOr(cost)
	if err != nil {
		return "", "", err
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
